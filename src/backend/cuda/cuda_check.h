// Turning CUDA and cuBLASLt status codes into hwt::Error with context.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include "core/error.h"

namespace hwt::cuda {

inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    fail("cuda backend: {}: {} ({})", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

inline void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    fail("cuda backend: {}: cuBLASLt status {}", what, static_cast<int>(s));
}

// After enqueuing kernels: reports a launch failure (bad configuration, missing image).
inline void check_launch(const char* op) {
  check(cudaGetLastError(), op);
}

}  // namespace hwt::cuda
