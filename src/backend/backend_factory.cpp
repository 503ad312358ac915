#include "backend/backend_factory.h"

#include "core/error.h"
#ifdef HWT_WITH_CUDA
#include "backend/cuda/cuda_backend.h"
#endif

namespace hwt {

bool cuda_available() {
#ifdef HWT_WITH_CUDA
  return cuda_device_count() > 0;
#else
  return false;
#endif
}

std::unique_ptr<Backend> make_backend(const TrainConfig& train) {
  if (train.device == DeviceChoice::Cpu ||
      (train.device == DeviceChoice::Auto && !cuda_available()))
    return make_cpu_backend(static_cast<int>(train.threads));
#ifdef HWT_WITH_CUDA
  if (cuda_available()) {
    CudaOptions options;
    options.tf32 = train.precision == Precision::Tf32;
    options.gemm_autotune = train.gemm_autotune;
    options.deterministic_attention = train.deterministic_attention;
    return make_cuda_backend(0, options);
  }
  fail_input("train.device=\"cuda\" but no CUDA GPU is visible");
#else
  fail_input(
      "train.device=\"cuda\" but this hwt was built without CUDA (nvcc not found at build time)");
#endif
}

}  // namespace hwt
