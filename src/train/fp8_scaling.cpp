#include "train/fp8_scaling.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"

namespace hwt {

Fp8DelayedScaling::Fp8DelayedScaling(const Fp8ScalingOptions& o, std::vector<Fp8Format> formats)
    : o_(o), formats_(std::move(formats)) {
  if (o_.history < 1) fail_input("fp8 amax history of {} steps: it needs at least one", o_.history);
  scales_.assign(formats_.size(), 1.0f);
  history_.assign(formats_.size() * static_cast<size_t>(o_.history), 0.0f);
}

float Fp8DelayedScaling::scale(int64_t tensor) const {
  return scales_.at(static_cast<size_t>(tensor));
}

void Fp8DelayedScaling::record(int64_t tensor, float amax) {
  HWT_CHECK(tensor >= 0 && tensor < tensors(), "fp8 tensor {} of {}", tensor, tensors());
  float& slot = ring(tensor)[next_];
  // A NaN amax is kept: it must reach update(), which then keeps the old scale.
  slot = std::isnan(amax) || std::isnan(slot) ? NAN : std::max(slot, amax);
}

void Fp8DelayedScaling::update() {
  for (int64_t t = 0; t < tensors(); ++t) {
    const float* h = ring(t);
    float amax = h[next_];
    if (o_.algorithm == AmaxAlgorithm::Max)
      for (int64_t i = 0; i < o_.history; ++i)
        amax = std::isnan(h[i]) || std::isnan(amax) ? NAN : std::max(amax, h[i]);
    if (amax > 0.0f && std::isfinite(amax))
      scales_[static_cast<size_t>(t)] =
          fp8_max(formats_[static_cast<size_t>(t)]) / amax / std::ldexp(1.0f, o_.margin);
  }
  next_ = (next_ + 1) % o_.history;
  for (int64_t t = 0; t < tensors(); ++t) ring(t)[next_] = 0.0f;  // the oldest step leaves
}

std::optional<std::string> Fp8DelayedScaling::collapsed() const {
  for (int64_t t = 0; t < tensors(); ++t) {
    const float s = scales_[static_cast<size_t>(t)];
    if (std::isinf(s))
      return fmt::format(
          "fp8 tensor {}: its scale became infinite (its amax fell below {:g} over the last {} "
          "steps)",
          t, fp8_max(formats_[static_cast<size_t>(t)]) / std::numeric_limits<float>::max(),
          o_.history);
    if (s == 0.0f)
      return fmt::format("fp8 tensor {}: its scale fell to zero (its amax grew past float's range)",
                         t);
  }
  return std::nullopt;
}

std::vector<float> Fp8DelayedScaling::state() const {
  std::vector<float> s = scales_;
  for (int64_t t = 0; t < tensors(); ++t)
    for (int64_t i = 1; i <= o_.history; ++i) s.push_back(ring(t)[(next_ + i) % o_.history]);
  return s;
}

void Fp8DelayedScaling::restore(const std::vector<float>& state) {
  const size_t expected = formats_.size() * static_cast<size_t>(1 + o_.history);
  if (state.size() != expected)
    fail_input("fp8 scaling state of {} values where {} tensors with a history of {} need {}",
               state.size(), tensors(), o_.history, expected);
  std::copy_n(state.begin(), formats_.size(), scales_.begin());
  // Saved oldest first, ending with the step in progress: it goes back into slot next_ = 0.
  next_ = 0;
  auto it = state.begin() + static_cast<int64_t>(formats_.size());
  for (int64_t t = 0; t < tensors(); ++t)
    for (int64_t i = 1; i <= o_.history; ++i) ring(t)[i % o_.history] = *it++;
}

}  // namespace hwt
