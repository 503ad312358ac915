// Delayed scaling for fp8 training, the rule of NVIDIA Transformer Engine's DelayedScaling
// recipe, on the host: the reference that the device's update is tested against, and the form
// the scaling state takes in a checkpoint.
//
// Each fp8 tensor of a step (a GEMM operand or gradient) is cast with a scale chosen from the
// amaxes of earlier steps, since its own amax is known only once the cast has run. After every
// step, per tensor:
//   amax  = the largest amax in the last `history` steps ("max") or the latest ("most_recent")
//   scale = fp8_max(format) / amax / 2^margin, kept as it was where amax is 0 or not finite
// Transformer Engine's defaults (transformer_engine.common.recipe.DelayedScaling, releases 1.x
// to 2.x): history 1024, "max", margin 0, E4M3 in the forward and E5M2 for gradients ("HYBRID").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/fp8.h"

namespace hwt {

enum class AmaxAlgorithm : uint8_t { Max, MostRecent };

struct Fp8ScalingOptions {
  int64_t history = 1024;  // steps of amax kept per tensor
  AmaxAlgorithm algorithm = AmaxAlgorithm::Max;
  int margin = 0;  // the scale leaves a headroom of 2^margin
};

class Fp8DelayedScaling {
 public:
  // One scale per tensor, all starting at 1 with an empty history.
  Fp8DelayedScaling(const Fp8ScalingOptions& o, std::vector<Fp8Format> formats);

  int64_t tensors() const { return std::ssize(formats_); }
  float scale(int64_t tensor) const;
  // The amax the cast of `tensor` saw in this step (the largest, if it is cast more than once).
  void record(int64_t tensor, float amax);
  // Ends the step: every tensor's scale from its history, which then moves on by one step.
  void update();

  // A scale that can no longer serve, with the tensor and the reason; nullopt while all can. The
  // run stops on it: an infinite scale means the tensor's values fell to (near) zero for the
  // whole history, a zero scale that they grew past float's range.
  std::optional<std::string> collapsed() const;

  // The state a checkpoint keeps: per tensor its scale, then its history from oldest to newest.
  // Restoring it continues exactly where the saved run was.
  std::vector<float> state() const;
  void restore(const std::vector<float>& state);

 private:
  Fp8ScalingOptions o_;
  std::vector<Fp8Format> formats_;
  std::vector<float> scales_;
  std::vector<float> history_;  // [tensor][history], a ring; slot next_ is this step's
  int64_t next_ = 0;

  float* ring(int64_t tensor) { return history_.data() + tensor * o_.history; }
  const float* ring(int64_t tensor) const { return history_.data() + tensor * o_.history; }
};

}  // namespace hwt
