// Chooses and creates the backend a run asks for.
#pragma once

#include <memory>

#include "backend/backend.h"
#include "config/train_config.h"

namespace hwt {

// True when hwt was built with CUDA and a GPU is visible.
bool cuda_available();

// auto: CUDA when available, else CPU. cuda without a GPU raises InputError. The CUDA
// backend takes its options from the training config: Precision::Tf32 runs fp32 GEMMs on TF32
// tensor cores, gemm_autotune and deterministic_attention as in CudaOptions.
std::unique_ptr<Backend> make_backend(const TrainConfig& train);

}  // namespace hwt
