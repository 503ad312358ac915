// HWT_HD marks functions compiled for both the host and (under nvcc) the device, so the CPU
// reference and the CUDA kernels share one definition of RNG and small math.
#pragma once

#if defined(__CUDACC__)
#define HWT_HD __host__ __device__ __forceinline__
#else
#define HWT_HD inline
#endif
