// Which attention calls the CUDA backend runs on tensor cores: one rule list for the kernel
// dispatch and for `hwt shape`, which flags model shapes that fall back to the generic kernels.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/dtype.h"

namespace hwt {

// Why attention over activations of dtype `dt` with this head size runs the generic (fp32,
// CUDA-core) kernels, or empty when a tensor-core kernel takes it. tf32: the run allows TF32
// products for fp32 activations (train.precision tf32). The GPU and the tensors' alignment
// are checked where the kernels are launched.
std::string_view attention_slow_path(DType dt, bool tf32, int64_t head_dim);

// The head size the tensor-core kernels load: rows of whole 16-byte chunks (a multiple of 8
// 16-bit or 4 fp32 elements). Other sizes run on copies padded with zero columns, which change
// neither the scores nor the outputs (PyTorch's SDPA pads the same way).
int64_t attention_kernel_head_dim(DType dt, int64_t head_dim);

}  // namespace hwt
