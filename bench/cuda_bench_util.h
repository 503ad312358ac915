// Shared pieces of the CUDA benchmarks: device memory in use and JSON-line output. Device work
// is timed with measure/device_time.h, as hwt's own GEMM timer does.
#pragma once

#ifdef HWT_WITH_CUDA
#include <cuda_runtime.h>
#endif

#include <cstdio>
#include <string>

namespace hwt::bench {

// Bytes of device memory in use (all processes' allocations on this device included); 0 in
// builds without CUDA.
inline double device_used_bytes() {
#ifdef HWT_WITH_CUDA
  size_t free_b = 0, total_b = 0;
  cudaMemGetInfo(&free_b, &total_b);
  return static_cast<double>(total_b - free_b);
#else
  return 0;
#endif
}

inline void emit(const std::string& json) {
  std::printf("%s\n", json.c_str());
  std::fflush(stdout);
}

}  // namespace hwt::bench
