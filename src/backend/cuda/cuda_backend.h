// The CUDA backend: every Backend op on an NVIDIA GPU (one stream, cuBLASLt GEMMs, fused
// kernels). Activations may be f32, bf16 or f16; statistics, losses, gradients, master
// parameters and optimizer states are f32. docs/cuda.md describes the design.
#pragma once

#include <memory>

#include "backend/backend.h"

namespace hwt {

struct CudaOptions {
  // fp32 GEMMs use TF32 tensor cores (10-bit mantissa products, fp32 accumulation).
  bool tf32 = false;
  // Each GEMM shape's algorithm is the fastest of cuBLASLt's first 8 suggestions, timed on its
  // first call (which synchronises), instead of the first suggestion. Faster steps; runs in
  // separate processes may pick different algorithms and so differ in rounding.
  bool gemm_autotune = false;
  // The attention backward sums dQ in a fixed order. false: the fused dK/dV kernel adds dQ
  // with fp32 atomics instead (fewer matrix products, faster; rounding varies run to run).
  bool deterministic_attention = true;
};

// Number of visible CUDA devices; 0 when there is no GPU or no driver (never throws).
int cuda_device_count();

std::unique_ptr<Backend> make_cuda_backend(int device, CudaOptions options = {});

}  // namespace hwt
