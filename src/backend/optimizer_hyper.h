// The hyper-parameters of one optimizer step, bias corrections included: one struct per
// optimizer from the run's OptimConfig (train/optimizer.cpp) through the step op (ops.h) into
// the CUDA kernels, passed by value, so the CPU reference and the GPU update with the same
// floats. Plain data, so device code can include it.
#pragma once

#include <cstdint>

namespace hwt {

// Of AdamWStep.
struct AdamWHyper {
  float lr = 1e-3f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f, weight_decay = 0.0f;
  // Of step t, set by at_step: lr / (1 - beta1^t) and sqrt(1 - beta2^t).
  float step_size = 0.0f, bc2_sqrt = 0.0f;
};

// Of AdanStep, betas as sail-sg/Adan writes them.
struct AdanHyper {
  float lr = 1e-3f, beta1 = 0.98f, beta2 = 0.92f, beta3 = 0.99f, eps = 1e-8f;
  float weight_decay = 0.0f;
  bool no_prox = false;  // decoupled decay theta *= 1 - lr*wd instead of the proximal one
  // Of step t, set by at_step: lr / (1 - beta1^t), lr * beta2 / (1 - beta2^t),
  // sqrt(1 - beta3^t), and whether t = 1 (the gradient difference is then 0).
  float step_size = 0.0f, step_size_diff = 0.0f, bc3_sqrt = 0.0f;
  bool first = false;
};

// Of SgdStep.
struct SgdHyper {
  float lr = 1e-2f, momentum = 0.9f, weight_decay = 0.0f;
  bool nesterov = false;
  bool first = false;  // set by at_step: t = 1, the momentum buffer starts at the gradient
};

// h with the values of step `step` (1-based) filled in: the one place they are computed, in
// float as the updates that use them.
AdamWHyper at_step(AdamWHyper h, int64_t step);
AdanHyper at_step(AdanHyper h, int64_t step);
SgdHyper at_step(SgdHyper h, int64_t step);

}  // namespace hwt
