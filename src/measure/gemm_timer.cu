#include "measure/gemm_timer.h"

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/error.h"

namespace hwt {
namespace {

constexpr size_t kWorkspaceBytes = size_t{32} << 20;  // NVIDIA's recommendation for Hopper
constexpr double kBatchSeconds = 1e-3;                // each timed batch of runs lasts >= this
constexpr int kMaxInner = 256;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) fail("CUDA {}: {}", what, cudaGetErrorString(e));
}

void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) fail("cuBLASLt {}: status {}", what, static_cast<int>(s));
}

struct Types {
  cudaDataType_t data;
  cublasComputeType_t compute;
};

Types types_for(Precision p) {
  switch (p) {
    case Precision::Fp32:
      return {CUDA_R_32F, CUBLAS_COMPUTE_32F};
    case Precision::Tf32:
      return {CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32};
    case Precision::Bf16:
      return {CUDA_R_16BF, CUBLAS_COMPUTE_32F};
    case Precision::Fp16:
      return {CUDA_R_16F, CUBLAS_COMPUTE_32F};
    case Precision::Fp8:
      break;
  }
  fail_input("the GEMM timer measures fp32, tf32, bf16 and fp16, not {}", precision_name(p));
}

template <class T>
__device__ T from_float(float v) {
  return static_cast<T>(v);
}
template <>
__device__ __nv_bfloat16 from_float(float v) {
  return __float2bfloat16(v);
}
template <>
__device__ __half from_float(float v) {
  return __float2half(v);
}
__device__ float to_float(float v) {
  return v;
}
__device__ float to_float(__nv_bfloat16 v) {
  return __bfloat162float(v);
}
__device__ float to_float(__half v) {
  return __half2float(v);
}

// Uniform values in [-1, 1) from a hash of the index: never zeros, which would time faster.
template <class T>
__global__ void fill_random(T* p, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    uint32_t x = static_cast<uint32_t>(i) * 2654435761u ^ seed;
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    p[i] = from_float<T>(static_cast<float>(x) * 0x1p-31f - 1.0f);
  }
}

template <class T>
__global__ void from_floats(T* dst, const float* src, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x)
    dst[i] = from_float<T>(src[i]);
}

template <class T>
__global__ void to_floats(float* dst, const T* src, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x)
    dst[i] = to_float(src[i]);
}

constexpr int kThreads = 256;
unsigned blocks_for(size_t n) {
  return static_cast<unsigned>(std::min<size_t>((n + kThreads - 1) / kThreads, 65535));
}

// Dispatches a kernel template on the storage type of p.
template <template <class> class K, class... Args>
void launch_typed(Precision p, cudaStream_t st, size_t n, Args... args) {
  if (p == Precision::Bf16)
    K<__nv_bfloat16>::run(blocks_for(n), st, n, args...);
  else if (p == Precision::Fp16)
    K<__half>::run(blocks_for(n), st, n, args...);
  else
    K<float>::run(blocks_for(n), st, n, args...);
}

template <class T>
struct FillRandom {
  static void run(unsigned blocks, cudaStream_t st, size_t n, void* p, uint32_t seed) {
    fill_random<T><<<blocks, kThreads, 0, st>>>(static_cast<T*>(p), n, seed);
  }
};
template <class T>
struct FromFloats {
  static void run(unsigned blocks, cudaStream_t st, size_t n, void* dst, const float* src) {
    from_floats<T><<<blocks, kThreads, 0, st>>>(static_cast<T*>(dst), src, n);
  }
};
template <class T>
struct ToFloats {
  static void run(unsigned blocks, cudaStream_t st, size_t n, float* dst, const void* src) {
    to_floats<T><<<blocks, kThreads, 0, st>>>(dst, static_cast<const T*>(src), n);
  }
};

// One cuBLASLt problem. Row-major C = op(A)·op(B) is column-major Cᵀ = op(B)ᵀ·op(A)ᵀ, so B's
// buffer is cuBLAS's first operand and A's the second.
class Problem {
 public:
  Problem(cublasLtHandle_t lt, const GemmShape& s, Precision p) : lt_(lt) {
    const Types t = types_for(p);
    check(cublasLtMatmulDescCreate(&op_, t.compute, CUDA_R_32F), "matmul desc");
    const cublasOperation_t ta = s.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t tb = s.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    check(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta),
          "transa");
    check(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb),
          "transb");
    const auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
    layout(&a_, t.data, s.trans_b ? u(s.k) : u(s.n), s.trans_b ? u(s.n) : u(s.k), s.lead_b(),
           s.batch, s.k * s.n);
    layout(&b_, t.data, s.trans_a ? u(s.m) : u(s.k), s.trans_a ? u(s.k) : u(s.m), s.lead_a(),
           s.batch, s.m * s.k);
    layout(&c_, t.data, u(s.n), u(s.m), s.lead_c(), s.batch, s.m * s.n);
    cublasLtMatmulPreference_t pref;
    check(cublasLtMatmulPreferenceCreate(&pref), "preference");
    const size_t ws = kWorkspaceBytes;
    check(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                               sizeof ws),
          "workspace preference");
    int found = 0;
    const cublasStatus_t st =
        cublasLtMatmulAlgoGetHeuristic(lt_, op_, a_, b_, c_, c_, pref, 1, &heuristic_, &found);
    cublasLtMatmulPreferenceDestroy(pref);
    check(st, "heuristic");
    if (found == 0) fail("cuBLASLt has no algorithm for GEMM {}", shape_label(s));
  }
  ~Problem() {
    cublasLtMatrixLayoutDestroy(c_);
    cublasLtMatrixLayoutDestroy(b_);
    cublasLtMatrixLayoutDestroy(a_);
    cublasLtMatmulDescDestroy(op_);
  }
  Problem(const Problem&) = delete;
  Problem& operator=(const Problem&) = delete;

  void run(const void* a, const void* b, void* c, void* ws, cudaStream_t st) const {
    const float alpha = 1, beta = 0;
    check(cublasLtMatmul(lt_, op_, &alpha, b, a_, a, b_, &beta, c, c_, c, c_, &heuristic_.algo, ws,
                         kWorkspaceBytes, st),
          "matmul");
  }

 private:
  static void layout(cublasLtMatrixLayout_t* l, cudaDataType_t t, uint64_t rows, uint64_t cols,
                     int64_t ld, int64_t batch, int64_t stride) {
    check(cublasLtMatrixLayoutCreate(l, t, rows, cols, ld), "layout");
    if (batch > 1) {
      const int32_t count = static_cast<int32_t>(batch);
      check(cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                             sizeof count),
            "batch count");
      check(cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                             &stride, sizeof stride),
            "batch stride");
    }
  }

  cublasLtHandle_t lt_;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr;
  cublasLtMatmulHeuristicResult_t heuristic_{};
};

size_t elements(const GemmShape& s, char which) {
  const int64_t per = which == 'a' ? s.m * s.k : which == 'b' ? s.k * s.n : s.m * s.n;
  return static_cast<size_t>(per * s.batch);
}

}  // namespace

bool cuda_device_present() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

struct GemmTimer::Impl {
  cudaDeviceProp prop{};
  cublasLtHandle_t lt = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  void* workspace = nullptr;
  void* buf[3] = {};  // A, B, C
  size_t cap[3] = {};
  uint32_t seed = 1;

  void* ensure(int i, size_t bytes) {
    if (cap[i] < bytes) {
      if (buf[i]) check(cudaFree(buf[i]), "free");
      buf[i] = nullptr;
      check(cudaMalloc(&buf[i], bytes), "malloc");
      cap[i] = bytes;
    }
    return buf[i];
  }

  float elapsed() {
    check(cudaEventSynchronize(stop), "event sync");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "elapsed");
    return ms;
  }
};

GemmTimer::GemmTimer() : impl_(std::make_unique<Impl>()) {
  if (!cuda_device_present()) fail_input("no CUDA device found: GEMM measurement needs a GPU");
  Impl& d = *impl_;
  check(cudaGetDeviceProperties(&d.prop, 0), "device properties");
  check(cublasLtCreate(&d.lt), "create");
  check(cudaStreamCreate(&d.stream), "stream");
  check(cudaEventCreate(&d.start), "event");
  check(cudaEventCreate(&d.stop), "event");
  check(cudaMalloc(&d.workspace, kWorkspaceBytes), "workspace");
}

GemmTimer::~GemmTimer() {
  Impl& d = *impl_;
  for (void* b : d.buf)
    if (b) cudaFree(b);
  if (d.workspace) cudaFree(d.workspace);
  if (d.start) cudaEventDestroy(d.start);
  if (d.stop) cudaEventDestroy(d.stop);
  if (d.stream) cudaStreamDestroy(d.stream);
  if (d.lt) cublasLtDestroy(d.lt);
}

std::string GemmTimer::device_name() const {
  return impl_->prop.name;
}
int GemmTimer::sm_count() const {
  return impl_->prop.multiProcessorCount;
}

double GemmTimer::seconds(const GemmShape& s, Precision p) {
  Impl& d = *impl_;
  const Problem problem(d.lt, s, p);
  const size_t eb = static_cast<size_t>(precision_bytes(p));
  void* a = d.ensure(0, elements(s, 'a') * eb);
  void* b = d.ensure(1, elements(s, 'b') * eb);
  void* c = d.ensure(2, elements(s, 'c') * eb);
  launch_typed<FillRandom>(p, d.stream, elements(s, 'a'), a, d.seed++);
  launch_typed<FillRandom>(p, d.stream, elements(s, 'b'), b, d.seed++);
  check(cudaGetLastError(), "fill");

  problem.run(a, b, c, d.workspace, d.stream);  // warm-up: loads the kernel
  check(cudaEventRecord(d.start, d.stream), "record");
  problem.run(a, b, c, d.workspace, d.stream);
  check(cudaEventRecord(d.stop, d.stream), "record");
  const double once = std::max(d.elapsed() * 1e-3, 1e-6);  // event resolution is ~0.5 us
  // Batches of back-to-back runs hide launch gaps as a training step does.
  const int inner = std::clamp(static_cast<int>(std::ceil(kBatchSeconds / once)), 1, kMaxInner);
  const int batches = once > 20e-3 ? 3 : 7;
  std::vector<double> per_run;
  for (int r = 0; r < batches; ++r) {
    check(cudaEventRecord(d.start, d.stream), "record");
    for (int i = 0; i < inner; ++i) problem.run(a, b, c, d.workspace, d.stream);
    check(cudaEventRecord(d.stop, d.stream), "record");
    per_run.push_back(d.elapsed() * 1e-3 / inner);
  }
  std::sort(per_run.begin(), per_run.end());
  return per_run[per_run.size() / 2];
}

std::vector<float> GemmTimer::multiply(const GemmShape& s, Precision p,
                                       const std::vector<float>& a, const std::vector<float>& b) {
  Impl& d = *impl_;
  HWT_CHECK(a.size() == elements(s, 'a') && b.size() == elements(s, 'b'), "operand sizes");
  const Problem problem(d.lt, s, p);
  const size_t eb = static_cast<size_t>(precision_bytes(p));
  const size_t nc = elements(s, 'c');
  void* da = d.ensure(0, a.size() * eb);
  void* db = d.ensure(1, b.size() * eb);
  void* dc = d.ensure(2, nc * eb);
  float* staging = nullptr;
  check(cudaMalloc(&staging, std::max({a.size(), b.size(), nc}) * sizeof(float)), "malloc");
  auto upload = [&](void* dst, const std::vector<float>& host) {
    check(cudaMemcpyAsync(staging, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice,
                          d.stream),
          "upload");
    launch_typed<FromFloats>(p, d.stream, host.size(), dst, static_cast<const float*>(staging));
  };
  upload(da, a);
  upload(db, b);
  problem.run(da, db, dc, d.workspace, d.stream);
  launch_typed<ToFloats>(p, d.stream, nc, staging, static_cast<const void*>(dc));
  std::vector<float> out(nc);
  check(cudaMemcpyAsync(out.data(), staging, nc * sizeof(float), cudaMemcpyDeviceToHost, d.stream),
        "download");
  check(cudaStreamSynchronize(d.stream), "sync");
  check(cudaFree(staging), "free");
  return out;
}

}  // namespace hwt
