#include "train/fp8_scaling.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"

namespace hwt {
namespace {

// Floats from the buffer's start to scale_inv [T, 4]: scale, amax, history and the counts, rounded
// up to a 16-byte boundary.
int64_t scale_inv_offset(int64_t tensors, int64_t history) {
  return (tensors * (5 + history) + 3) / 4 * 4;
}

size_t state_bytes(int64_t tensors, int64_t history) {
  return static_cast<size_t>(scale_inv_offset(tensors, history) + tensors * kScaleInvStride) *
         sizeof(float);
}

}  // namespace

Fp8DelayedScaling::Fp8DelayedScaling(Backend& backend, const Fp8ScalingOptions& o, Fp8Format format,
                                     std::vector<std::string> names)
    : backend_(backend),
      o_(o),
      format_(format),
      names_(std::move(names)),
      tensors_(std::ssize(names_)) {
  if (o_.history < 1) fail_input("fp8 amax history of {} steps: it needs at least one", o_.history);
  if (o_.margin < 0 || o_.margin > 64)
    fail_input("fp8 scaling margin {}: it is a power of two from 0 to 64", o_.margin);
  buf_ = DeviceBuffer(backend_, state_bytes(tensors_, o_.history));
  if (tensors_ == 0) return;
  backend_.fill({scales(), 1.0f});
  backend_.fill({scale_invs(), 1.0f});
  backend_.fill({amaxes(), 0.0f});
  backend_.fill({histories(), 0.0f});
  backend_.fill({all_counts(), 0.0f});
}

Tensor Fp8DelayedScaling::floats(int64_t offset, Shape shape) const {
  return buf_.tensor(DType::F32, shape, static_cast<size_t>(offset) * sizeof(float));
}

int64_t Fp8DelayedScaling::checked(int64_t t) const {
  HWT_CHECK(t >= 0 && t < tensors_, "fp8 tensor {} of {}", t, tensors_);
  return t;
}

Tensor Fp8DelayedScaling::all_counts() const {
  return buf_.tensor(DType::I32, Shape{tensors_, 3},
                     static_cast<size_t>(tensors_ * (2 + o_.history)) * sizeof(float));
}

Tensor Fp8DelayedScaling::scale_invs() const {
  return floats(scale_inv_offset(tensors_, o_.history), Shape{tensors_, kScaleInvStride});
}

Tensor Fp8DelayedScaling::scale(int64_t t) const {
  return floats(checked(t), Shape{1});
}

Tensor Fp8DelayedScaling::scale_inv(int64_t t) const {
  return floats(scale_inv_offset(tensors_, o_.history) + kScaleInvStride * checked(t), Shape{1});
}

Tensor Fp8DelayedScaling::amax(int64_t t) const {
  return floats(tensors_ + checked(t), Shape{1});
}

Tensor Fp8DelayedScaling::counts(int64_t t) const {
  return all_counts().flat_slice(3 * checked(t), 3);
}

void Fp8DelayedScaling::update(Communicator* ranks) {
  if (tensors_ == 0) return;
  if (ranks) {
    ranks->all_reduce_max(amaxes());
    ranks->wait();
  }
  backend_.fp8_scale_update(
      {amaxes(), histories(), scales(), scale_invs(), format_, o_.algorithm, o_.margin});
}

std::vector<float> Fp8DelayedScaling::read_scales() const {
  std::vector<float> s(static_cast<size_t>(tensors_));
  if (tensors_ > 0) backend_.download(s.data(), scales());
  return s;
}

std::vector<Fp8Counts> Fp8DelayedScaling::read_counts() const {
  std::vector<float> amax(static_cast<size_t>(tensors_));
  std::vector<int32_t> counts(static_cast<size_t>(tensors_ * 3));
  if (tensors_ > 0) {
    backend_.download(amax.data(), amaxes());
    backend_.download(counts.data(), all_counts());
  }
  std::vector<Fp8Counts> out(static_cast<size_t>(tensors_));
  for (size_t t = 0; t < out.size(); ++t)
    out[t] = {amax[t], counts[3 * t], counts[3 * t + 1], counts[3 * t + 2]};
  return out;
}

std::vector<Fp8Counts> Fp8DelayedScaling::take_counts() {
  std::vector<Fp8Counts> c = read_counts();
  if (tensors_ > 0) backend_.fill({all_counts(), 0.0f});
  return c;
}

std::optional<std::string> Fp8DelayedScaling::collapsed() const {
  const std::vector<float> scales = read_scales();
  for (size_t t = 0; t < scales.size(); ++t) {
    if (std::isinf(scales[t]))
      return fmt::format(
          "fp8 tensor {}: its scale became infinite (its amax fell below {:g} over the last {} "
          "steps)",
          names_[t], fp8_max(format_) / std::numeric_limits<float>::max(), o_.history);
    if (scales[t] == 0.0f)
      return fmt::format("fp8 tensor {}: its scale fell to zero (its amax grew past float's range)",
                         names_[t]);
  }
  return std::nullopt;
}

std::vector<float> Fp8DelayedScaling::state() const {
  // scale, amax and history lead the buffer; scale_inv follows from scale and is not kept.
  const int64_t n = tensors_ * (2 + o_.history);
  std::vector<float> all(static_cast<size_t>(n));
  if (tensors_ > 0) backend_.download(all.data(), floats(0, Shape{n}));
  const auto t = static_cast<int64_t>(tensors_);
  std::vector<float> s(all.begin(), all.begin() + t);
  s.insert(s.end(), all.begin() + 2 * t, all.end());
  s.insert(s.end(), all.begin() + t, all.begin() + 2 * t);
  return s;
}

void Fp8DelayedScaling::restore(const std::vector<float>& state) {
  const int64_t t = tensors_;
  if (std::ssize(state) != state_size())
    fail_input("fp8 scaling state of {} values where {} tensors with a history of {} need {}",
               state.size(), tensors_, o_.history, state_size());
  if (tensors_ == 0) return;
  std::vector<float> all(static_cast<size_t>(t * (2 + o_.history)));
  std::vector<float> inv(static_cast<size_t>(t * kScaleInvStride), 0.0f);
  const auto scale_end = state.begin() + t, history_end = state.end() - t;
  std::copy(state.begin(), scale_end, all.begin());
  std::copy(history_end, state.end(), all.begin() + t);
  std::copy(scale_end, history_end, all.begin() + 2 * t);
  for (int64_t i = 0; i < t; ++i) inv[size_t(i * kScaleInvStride)] = 1.0f / state[size_t(i)];
  backend_.upload(floats(0, Shape{std::ssize(all)}), all.data());
  backend_.upload(scale_invs(), inv.data());
}

}  // namespace hwt
