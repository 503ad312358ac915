// Force-included (nvcc -include) when bench/llmc_vs_hwt.sh builds llm.c with CUDA 13 or later,
// whose cudaMemAdvise takes a cudaMemLocation where CUDA 12 took a device number; llm.c (pinned in
// scripts/get_llmc.sh) still passes the number. This overload restores the CUDA 12 form, so
// llm.c's sources stay unmodified. llm.c calls it only on its cudaMallocManaged fallback, when
// device memory runs out, which a 124M model at B16 T1024 on an H200 does not reach.
#pragma once
#include <cuda_runtime.h>

#if defined(__cplusplus) && CUDART_VERSION >= 13000
static inline cudaError_t cudaMemAdvise(const void* ptr, size_t bytes, cudaMemoryAdvise advice,
                                        int device) {
  cudaMemLocation where{};
  where.type = device == cudaCpuDeviceId ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;
  where.id = device == cudaCpuDeviceId ? 0 : device;
  return cudaMemAdvise(ptr, bytes, advice, where);
}
#endif
