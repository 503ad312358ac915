// cuBLASLt GEMMs in column-major terms: D[m,n] = alpha · op(A)[m,k] · op(B)[k,n] + beta · D,
// optionally strided-batched, with bias / GELU epilogues, in f32, tf32, bf16, f16 or fp8. One plan
// (descriptors and an algorithm) is cached per shape, dtype, epilogue and pointer alignment. The
// algorithm is the heuristic's first choice, or with autotuning the fastest of its first few, timed
// once on the first call's operands (that call synchronises, so it cannot be captured into a CUDA
// graph; later ones never synchronise).
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <array>
#include <cstdint>
#include <map>
#include <utility>

#include "core/dtype.h"

namespace hwt::cuda {

enum class Epilogue : uint8_t { None, Bias, GeluAuxBias };

struct GemmDesc {
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0;
  const void* a = nullptr;
  int64_t lda = 0;
  const void* b = nullptr;
  int64_t ldb = 0;
  void* d = nullptr;
  int64_t ldd = 0;
  DType a_type = DType::F32, b_type = DType::F32, d_type = DType::F32;
  float alpha = 1.0f, beta = 0.0f;
  int64_t batch = 1, stride_a = 0, stride_b = 0, stride_d = 0;
  Epilogue epilogue = Epilogue::None;
  const void* bias = nullptr;  // d_type elements, length m
  void* aux = nullptr;         // GeluAuxBias: the pre-activation, d_type, leading dim ldd
  // fp8 operands (trans_a and not trans_b, as Hopper's fp8 GEMMs take them): each stands for its
  // codes times its factor (device f32). fast_accum: cuBLASLt's fast accumulation, which keeps
  // the tensor cores' partial sums rather than adding them into fp32 as it goes.
  const float* a_scale = nullptr;
  const float* b_scale = nullptr;
  bool fast_accum = false;
};

class Gemm {
 public:
  Gemm(bool tf32, bool autotune);
  ~Gemm();
  Gemm(const Gemm&) = delete;
  Gemm& operator=(const Gemm&) = delete;

  // Enqueues the GEMM. Returns false (doing nothing) when cuBLASLt has no algorithm for an
  // epilogue request; throws hwt::Error on any other failure.
  bool run(const GemmDesc& g, cudaStream_t stream);
  // Whether run(g) would first time algorithms (autotuning, a plan not made yet): that
  // synchronises, so it cannot happen inside a CUDA graph capture.
  bool would_tune(const GemmDesc& g) const;

 private:
  struct Plan {
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
    cublasLtMatmulAlgo_t algo{};
    bool ok = false;
  };
  using Key = std::array<int64_t, 24>;
  static Key key(const GemmDesc& g);
  Plan make_plan(const GemmDesc& g, cudaStream_t stream);
  // The fastest of `algos` for g, by timing each on g's operands.
  cublasLtMatmulAlgo_t fastest(const Plan& p, const GemmDesc& g,
                               const cublasLtMatmulHeuristicResult_t* algos, int n,
                               cudaStream_t stream);

  bool tf32_, autotune_;
  cublasLtHandle_t handle_ = nullptr;
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
  // Two 16-byte slots for fp8 scales that are not on a 16-byte boundary, which cuBLASLt's fp8
  // kernels refuse (CUBLAS_STATUS_NOT_SUPPORTED, seen on an H100): run() copies such a scale
  // here first, in stream order.
  float* aligned_scales_ = nullptr;
  // g's scales, each copied to its slot first where it is not on a 16-byte boundary.
  std::pair<const float*, const float*> aligned(const GemmDesc& g, cudaStream_t stream);
  std::map<Key, Plan> plans_;
};

}  // namespace hwt::cuda
