// Dynamic loss scaling for fp16 training, kept entirely on the device: the scale multiplies the
// logit gradients (Model::set_loss_scale), optimizer steps divide it out and skip a step whose
// gradients overflowed (Optimizer::set_loss_scale), and update() halves the scale after an
// overflow or doubles it after `interval` clean steps. Nothing here waits for the GPU except
// the read_* calls.
#pragma once

#include <cstdint>

#include "backend/backend.h"

namespace hwt {

struct LossScalerConfig {
  float init_scale = 65536.0f;
  float growth = 2.0f;
  float backoff = 0.5f;
  int64_t interval = 2000;  // clean steps before the scale grows
};

class LossScaler {
 public:
  explicit LossScaler(Backend& backend, const LossScalerConfig& cfg = {});

  // The current scale, f32 [1] in device memory.
  Tensor scale() const;
  // After the optimizer step: updates the scale from that step's squared gradient norm
  // (Optimizer::grad_norm_sq()).
  void update(Tensor grad_norm_sq);
  // Restarts at the initial scale (e.g. after loading a checkpoint).
  void reset();

  // Host reads (they synchronise): the scale, and the clean steps since the last change.
  float read_scale() const;
  int64_t read_clean_steps() const;
  // Whether the scale has fallen below kCollapsedBelow (a host read). From the initial 65536
  // that takes 17 overflowing steps in a row; below 1 the gradients overflow fp16 even unscaled,
  // which no scale repairs: the run has diverged and every further step is skipped.
  static constexpr float kCollapsedBelow = 1.0f;
  bool collapsed() const { return read_scale() < kCollapsedBelow; }
  const LossScalerConfig& config() const { return cfg_; }

 private:
  Backend& backend_;
  LossScalerConfig cfg_;
  DeviceBuffer state_;  // f32 [2] = {scale, clean steps}
};

}  // namespace hwt
