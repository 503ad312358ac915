#include "backend/cuda/cuda_gemm.h"

#include "backend/cuda/cuda_check.h"
#include "backend/gemm.h"

#include <fmt/format.h>

#include <limits>
#include <string>

namespace hwt::cuda {
namespace {

constexpr int kCandidates = 8;  // heuristic results an autotuned plan times
constexpr int kTimedRuns = 5;

cudaDataType_t cuda_type(DType t) {
  switch (t) {
    case DType::F32:
      return CUDA_R_32F;
    case DType::BF16:
      return CUDA_R_16BF;
    case DType::F16:
      return CUDA_R_16F;
    case DType::F8E4M3:
      return CUDA_R_8F_E4M3;
    case DType::F8E5M2:
      return CUDA_R_8F_E5M2;
    case DType::I32:
      break;
  }
  fail("cuda backend: GEMM operands must be f32, bf16, f16 or fp8, got {}", dtype_name(t));
}

// Largest power of two (at most 256) dividing the address.
int64_t alignment(const void* p) {
  const auto v = reinterpret_cast<uintptr_t>(p);
  int64_t a = 256;
  while (a > 1 && v % static_cast<uintptr_t>(a) != 0) a /= 2;
  return a;
}

template <class V>
void set_desc(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr, const V& v) {
  check(cublasLtMatmulDescSetAttribute(d, attr, &v, sizeof(v)), "cublasLtMatmulDescSetAttribute");
}

template <class V>
void set_layout(cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t attr, const V& v) {
  check(cublasLtMatrixLayoutSetAttribute(l, attr, &v, sizeof(v)),
        "cublasLtMatrixLayoutSetAttribute");
}

template <class V>
void set_pref(cublasLtMatmulPreference_t p, cublasLtMatmulPreferenceAttributes_t attr, const V& v) {
  check(cublasLtMatmulPreferenceSetAttribute(p, attr, &v, sizeof(v)),
        "cublasLtMatmulPreferenceSetAttribute");
}

cublasLtMatrixLayout_t make_layout(DType t, int64_t rows, int64_t cols, int64_t ld, int64_t batch,
                                   int64_t stride) {
  cublasLtMatrixLayout_t l = nullptr;
  check(cublasLtMatrixLayoutCreate(&l, cuda_type(t), static_cast<uint64_t>(rows),
                                   static_cast<uint64_t>(cols), ld),
        "cublasLtMatrixLayoutCreate");
  if (batch > 1) {
    set_layout(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, static_cast<int32_t>(batch));
    set_layout(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, stride);
  }
  return l;
}

// A GEMM as an error names it: what cuBLASLt was asked for, in its column-major terms.
std::string describe(const GemmDesc& g) {
  static const char* const kEpilogues[] = {"none", "bias", "gelu_aux_bias"};
  return fmt::format(
      "a {}x{}x{} GEMM (batch {}, op {}{}, lda {} ldb {} ldd {}, {} x {} -> {}, beta {}, epilogue "
      "{}, alignment a {} b {} d {} bytes{})",
      g.m, g.n, g.k, g.batch, g.trans_a ? 'T' : 'N', g.trans_b ? 'T' : 'N', g.lda, g.ldb, g.ldd,
      dtype_name(g.a_type), dtype_name(g.b_type), dtype_name(g.d_type), g.beta,
      kEpilogues[static_cast<int>(g.epilogue)], alignment(g.a), alignment(g.b), alignment(g.d),
      is_fp8(g.a_type) ? ", fp8 scales" : "");
}

}  // namespace

Gemm::Gemm(bool tf32, bool autotune) : tf32_(tf32), autotune_(autotune) {
  check(cublasLtCreate(&handle_), "cublasLtCreate");
  check(cudaMalloc(&workspace_, kGemmWorkspaceBytes), "allocating the cuBLASLt workspace");
  workspace_bytes_ = kGemmWorkspaceBytes;
  check(cudaMalloc(&aligned_scales_, 8 * sizeof(float)), "allocating the fp8 scale slots");
}

Gemm::~Gemm() {
  for (auto& [key, p] : plans_) {
    if (p.a) cublasLtMatrixLayoutDestroy(p.a);
    if (p.b) cublasLtMatrixLayoutDestroy(p.b);
    if (p.d) cublasLtMatrixLayoutDestroy(p.d);
    if (p.op) cublasLtMatmulDescDestroy(p.op);
  }
  cudaFree(aligned_scales_);
  cudaFree(workspace_);
  cublasLtDestroy(handle_);
}

cublasLtMatmulAlgo_t Gemm::fastest(const Plan& p, const GemmDesc& g,
                                   const cublasLtMatmulHeuristicResult_t* algos, int n,
                                   cudaStream_t stream) {
  // With beta != 0 the output accumulates, so the trials write to a scratch copy of its shape
  // (the real call follows); with beta == 0 the real call overwrites whatever they wrote.
  void* d = g.d;
  void* scratch = nullptr;
  if (g.beta != 0.0f) {
    const int64_t elems = (g.batch - 1) * g.stride_d + g.ldd * (g.n - 1) + g.m;
    check(cudaMalloc(&scratch, static_cast<size_t>(elems) * dtype_size(g.d_type)),
          "allocating GEMM autotuning scratch");
    d = scratch;
  }
  cudaEvent_t start = nullptr, stop = nullptr;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  int best = 0;  // the heuristic's first choice unless a timed one beats it
  float best_ms = std::numeric_limits<float>::infinity();
  for (int i = 0; i < n; ++i) {
    auto call = [&] {
      return cublasLtMatmul(handle_, p.op, &g.alpha, g.a, p.a, g.b, p.b, &g.beta, d, p.d, d, p.d,
                            &algos[i].algo, workspace_, workspace_bytes_, stream);
    };
    if (call() != CUBLAS_STATUS_SUCCESS) continue;  // warm-up; skip algorithms that refuse
    check(cudaEventRecord(start, stream), "cudaEventRecord");
    for (int r = 0; r < kTimedRuns; ++r) call();
    check(cudaEventRecord(stop, stream), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0.0f;
    check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    if (ms < best_ms) {
      best = i;
      best_ms = ms;
    }
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  if (scratch) check(cudaFree(scratch), "freeing GEMM autotuning scratch");
  return algos[best].algo;
}

Gemm::Plan Gemm::make_plan(const GemmDesc& g, cudaStream_t stream) {
  Plan p;
  const bool fp32 = g.a_type == DType::F32;
  const cublasComputeType_t compute =
      fp32 && tf32_ ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  check(cublasLtMatmulDescCreate(&p.op, compute, CUDA_R_32F), "cublasLtMatmulDescCreate");
  set_desc(p.op, CUBLASLT_MATMUL_DESC_TRANSA, g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N);
  set_desc(p.op, CUBLASLT_MATMUL_DESC_TRANSB, g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N);
  cublasLtEpilogue_t ep = CUBLASLT_EPILOGUE_DEFAULT;
  if (g.epilogue == Epilogue::Bias) ep = CUBLASLT_EPILOGUE_BIAS;
  if (g.epilogue == Epilogue::GeluAuxBias) ep = CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
  set_desc(p.op, CUBLASLT_MATMUL_DESC_EPILOGUE, ep);
  if (g.epilogue != Epilogue::None) {
    set_desc(p.op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, cuda_type(g.d_type));
    set_desc(p.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, g.bias);
  }
  if (g.epilogue == Epilogue::GeluAuxBias) {
    set_desc(p.op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, g.aux);
    set_desc(p.op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, g.ldd);
  }
  if (is_fp8(g.a_type)) {
    const auto [a_scale, b_scale] = aligned(g, stream);
    set_desc(p.op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, a_scale);
    set_desc(p.op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, b_scale);
    set_desc(p.op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, static_cast<int8_t>(g.fast_accum));
  }
  p.a = g.trans_a ? make_layout(g.a_type, g.k, g.m, g.lda, g.batch, g.stride_a)
                  : make_layout(g.a_type, g.m, g.k, g.lda, g.batch, g.stride_a);
  p.b = g.trans_b ? make_layout(g.b_type, g.n, g.k, g.ldb, g.batch, g.stride_b)
                  : make_layout(g.b_type, g.k, g.n, g.ldb, g.batch, g.stride_b);
  p.d = make_layout(g.d_type, g.m, g.n, g.ldd, g.batch, g.stride_d);

  cublasLtMatmulPreference_t pref = nullptr;
  check(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
  set_pref(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, static_cast<uint64_t>(workspace_bytes_));
  set_pref(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, static_cast<uint32_t>(alignment(g.a)));
  set_pref(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, static_cast<uint32_t>(alignment(g.b)));
  set_pref(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, static_cast<uint32_t>(alignment(g.d)));
  set_pref(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, static_cast<uint32_t>(alignment(g.d)));
  cublasLtMatmulHeuristicResult_t results[kCandidates]{};
  int found = 0;
  const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(
      handle_, p.op, p.a, p.b, p.d, p.d, pref, autotune_ ? kCandidates : 1, results, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  if (st == CUBLAS_STATUS_SUCCESS && found > 0) {
    p.algo = found > 1 ? fastest(p, g, results, found, stream) : results[0].algo;
    p.ok = true;
  } else if (g.epilogue == Epilogue::None) {
    fail("cuda backend: cuBLASLt has no algorithm (status {}) for {}", static_cast<int>(st),
         describe(g));
  }
  return p;
}

Gemm::Key Gemm::key(const GemmDesc& g) {
  return {g.trans_a,
          g.trans_b,
          g.m,
          g.n,
          g.k,
          g.lda,
          g.ldb,
          g.ldd,
          static_cast<int64_t>(g.a_type),
          static_cast<int64_t>(g.d_type),
          g.batch,
          g.stride_a,
          g.stride_b,
          g.stride_d,
          static_cast<int64_t>(g.epilogue),
          alignment(g.a),
          alignment(g.b),
          alignment(g.d),
          alignment(g.bias),
          alignment(g.aux),
          g.beta != 0.0f,
          static_cast<int64_t>(g.b_type),
          g.fast_accum,
          0};
}

bool Gemm::would_tune(const GemmDesc& g) const {
  return autotune_ && g.m != 0 && g.n != 0 && !plans_.contains(key(g));
}

std::pair<const float*, const float*> Gemm::aligned(const GemmDesc& g, cudaStream_t stream) {
  auto slot = [&](const float* scale, int i) -> const float* {
    if (alignment(scale) >= 16) return scale;
    float* to = aligned_scales_ + 4 * i;
    check(cudaMemcpyAsync(to, scale, sizeof(float), cudaMemcpyDeviceToDevice, stream),
          "copying an fp8 scale to a 16-byte boundary");
    return to;
  };
  return {slot(g.a_scale, 0), slot(g.b_scale, 1)};
}

bool Gemm::run(const GemmDesc& g, cudaStream_t stream) {
  if (g.m == 0 || g.n == 0) return true;
  const Key k = key(g);
  auto it = plans_.find(k);
  if (it == plans_.end()) it = plans_.emplace(k, make_plan(g, stream)).first;
  Plan& p = it->second;
  if (!p.ok) return false;
  if (g.epilogue != Epilogue::None) set_desc(p.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, g.bias);
  if (g.epilogue == Epilogue::GeluAuxBias)
    set_desc(p.op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, g.aux);
  if (is_fp8(g.a_type)) {
    const auto [a_scale, b_scale] = aligned(g, stream);
    set_desc(p.op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, a_scale);
    set_desc(p.op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, b_scale);
  }
  const cublasStatus_t st =
      cublasLtMatmul(handle_, p.op, &g.alpha, g.a, p.a, g.b, p.b, &g.beta, g.d, p.d, g.d, p.d,
                     &p.algo, workspace_, workspace_bytes_, stream);
  // An epilogue the heuristic offered but the kernel refuses: the caller runs it apart.
  if (st == CUBLAS_STATUS_NOT_SUPPORTED && g.epilogue != Epilogue::None) {
    p.ok = false;
    return false;
  }
  if (st != CUBLAS_STATUS_SUCCESS)
    fail("cuda backend: cublasLtMatmul: cuBLASLt status {} for {}", static_cast<int>(st),
         describe(g));
  return true;
}

}  // namespace hwt::cuda
