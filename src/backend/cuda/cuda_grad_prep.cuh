// The factor every parameter gradient is multiplied by before an update (loss-scale removal,
// clipping), read from device memory as the CPU reference's grad_prep computes it; shared by
// the optimizers and the DynaProp pruning that must see the gradients as they will.
#pragma once

namespace hwt::cuda {

struct GradPrep {
  float mult;
  bool skip;  // the scaled gradients overflowed: the step changes nothing
};

// norm_sq: the squared norm of the (scaled) gradients, needed with max_norm > 0 or loss_scale.
__device__ __forceinline__ GradPrep grad_prep(const float* norm_sq, const float* loss_scale,
                                              float max_norm) {
  float mult = 1.0f;
  float unscale = 1.0f;
  if (loss_scale) {
    if (!isfinite(norm_sq[0])) return {0.0f, true};
    unscale = 1.0f / loss_scale[0];
    mult = unscale;
  }
  if (max_norm > 0.0f) {
    const float norm = sqrtf(norm_sq[0]) * unscale;
    mult *= fminf(1.0f, max_norm / (norm + 1e-6f));
  }
  return {mult, false};
}

}  // namespace hwt::cuda
