// Chooses and creates the backend a run asks for.
#pragma once

#include <memory>

#include "backend/backend.h"
#include "train/train_config.h"

namespace hwt {

// True when hwt was built with CUDA and a GPU is visible.
bool cuda_available();

// auto: CUDA when available, else CPU. cuda without a GPU raises InputError. With
// Precision::Tf32 the CUDA backend runs fp32 GEMMs on TF32 tensor cores; gemm_autotune picks
// each GEMM shape's fastest cuBLASLt algorithm by timing (CudaOptions::gemm_autotune).
std::unique_ptr<Backend> make_backend(DeviceChoice choice, int cpu_threads,
                                      Precision precision = Precision::Fp32,
                                      bool gemm_autotune = false);

}  // namespace hwt
