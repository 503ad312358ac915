#include "train/loss_scaler.h"

namespace hwt {

LossScaler::LossScaler(Backend& backend, const LossScalerConfig& cfg)
    : backend_(backend), cfg_(cfg), state_(backend, 2 * sizeof(float)) {
  if (!(cfg.init_scale > 0.0f) || !(cfg.growth >= 1.0f) || !(cfg.backoff > 0.0f) ||
      !(cfg.backoff < 1.0f) || cfg.interval < 1)
    fail_input(
        "loss scaling needs init_scale > 0, growth >= 1, 0 < backoff < 1 and interval >= 1 "
        "(got {}, {}, {}, {})",
        cfg.init_scale, cfg.growth, cfg.backoff, cfg.interval);
  reset();
}

Tensor LossScaler::scale() const {
  return state_.tensor(DType::F32, Shape{1});
}

void LossScaler::update(Tensor grad_norm_sq) {
  backend_.loss_scale_update({state_.tensor(DType::F32, Shape{2}), grad_norm_sq, cfg_.growth,
                              cfg_.backoff, cfg_.interval});
}

void LossScaler::reset() {
  const float host[2] = {cfg_.init_scale, 0.0f};
  backend_.upload(state_.tensor(DType::F32, Shape{2}), host);
}

float LossScaler::read_scale() const {
  float host[2];
  backend_.download(host, state_.tensor(DType::F32, Shape{2}));
  return host[0];
}

int64_t LossScaler::read_clean_steps() const {
  float host[2];
  backend_.download(host, state_.tensor(DType::F32, Shape{2}));
  return static_cast<int64_t>(host[1]);
}

}  // namespace hwt
