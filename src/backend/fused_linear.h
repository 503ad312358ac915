// fused_linear_forward (backend/ops.h) composed of the plain ops it stands for:
// layernorm_forward, linear_forward (and glu_forward), residual_forward, each writing its own
// region of a scratch buffer. The CPU backend runs it as the op's reference, and the CUDA
// backend where its one-row kernel does not serve. None of those ops' forwards takes scratch
// memory of its own, so a backend may hand its shared scratch over.
#pragma once

#include <cstddef>

#include "backend/backend.h"

namespace hwt {

// Checks that a's tensors agree (one error naming the first that does not) and gives the bytes
// of scratch compose_fused_linear needs.
size_t fused_linear_scratch_bytes(const FusedLinearFwd& a, Device device);

void compose_fused_linear(Backend& be, const FusedLinearFwd& a, void* scratch);

}  // namespace hwt
