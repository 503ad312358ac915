#include "backend/optimizer_hyper.h"

#include <cmath>

namespace hwt {

AdamWHyper at_step(AdamWHyper h, int64_t step) {
  const float t = static_cast<float>(step);
  h.step_size = h.lr / (1.0f - std::pow(h.beta1, t));
  h.bc2_sqrt = std::sqrt(1.0f - std::pow(h.beta2, t));
  return h;
}

AdanHyper at_step(AdanHyper h, int64_t step) {
  const float t = static_cast<float>(step);
  h.step_size = h.lr / (1.0f - std::pow(h.beta1, t));
  h.step_size_diff = h.lr * h.beta2 / (1.0f - std::pow(h.beta2, t));
  h.bc3_sqrt = std::sqrt(1.0f - std::pow(h.beta3, t));
  h.first = step == 1;
  return h;
}

SgdHyper at_step(SgdHyper h, int64_t step) {
  h.first = step == 1;
  return h;
}

}  // namespace hwt
