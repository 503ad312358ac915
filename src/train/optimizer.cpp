#include "train/optimizer.h"

namespace hwt {

Optimizer::Optimizer(const OptimConfig& cfg, ParamStore& params, double max_grad_norm)
    : cfg_(cfg), params_(params), max_grad_norm_(static_cast<float>(max_grad_norm)) {
  std::vector<std::string> names;
  switch (cfg.name) {
    case OptimizerKind::AdamW:
      names = {"exp_avg", "exp_avg_sq"};
      break;
    case OptimizerKind::Adan:
      names = {"exp_avg", "exp_avg_diff", "exp_avg_sq", "prev_grad"};
      break;
    case OptimizerKind::Sgd:
      names = {"momentum"};
      break;
  }
  Backend& be = params.backend();
  for (const std::string& n : names)
    state_.emplace_back(n, DeviceBuffer(be, static_cast<size_t>(params.count()) * 4));
  norm_sq_ = DeviceBuffer(be, 4);
  zero_state();
}

void Optimizer::zero_state() {
  for (auto& [name, buf] : state_)
    params_.backend().fill({buf.tensor(DType::F32, Shape{params_.count()}), 0.0f});
}

std::vector<std::pair<std::string, Tensor>> Optimizer::state() const {
  std::vector<std::pair<std::string, Tensor>> out;
  for (const auto& [name, buf] : state_)
    out.emplace_back(name, buf.tensor(DType::F32, Shape{params_.count()}));
  return out;
}

OptimizerTensors Optimizer::tensors() const {
  return {params_.params_flat(), params_.grads_flat(), params_.compute_flat(), params_.n_decay()};
}

void Optimizer::step(int64_t step, double lr) {
  Backend& be = params_.backend();
  be.set_scope("optimizer", Phase::Optimizer);
  GradClip clip;
  if (max_grad_norm_ > 0 || loss_scale_.defined()) {
    clip.grad_norm_sq = grad_norm_sq();
    clip.max_norm = max_grad_norm_;
    clip.loss_scale = loss_scale_;
    be.sum_squares({params_.grads_flat(), clip.grad_norm_sq});
  }
  // The norm is of the unpruned gradients: pruning comes after unscaling and clipping.
  if (pruning_) pruning_->param_grads(params_.grads_flat(), clip);
  auto buf = [&](size_t i) { return state_[i].second.tensor(DType::F32, Shape{params_.count()}); };
  const float flr = static_cast<float>(lr), wd = static_cast<float>(cfg_.weight_decay);
  switch (cfg_.name) {
    case OptimizerKind::AdamW: {
      AdamWStep a{tensors(),
                  buf(0),
                  buf(1),
                  clip,
                  flr,
                  static_cast<float>(cfg_.adamw_beta1),
                  static_cast<float>(cfg_.adamw_beta2),
                  static_cast<float>(cfg_.eps),
                  wd,
                  step};
      be.adamw_step(a);
      break;
    }
    case OptimizerKind::Adan: {
      AdanStep a{tensors(),
                 buf(0),
                 buf(1),
                 buf(2),
                 buf(3),
                 clip,
                 flr,
                 static_cast<float>(cfg_.adan_beta1),
                 static_cast<float>(cfg_.adan_beta2),
                 static_cast<float>(cfg_.adan_beta3),
                 static_cast<float>(cfg_.eps),
                 wd,
                 cfg_.adan_no_prox,
                 step};
      be.adan_step(a);
      break;
    }
    case OptimizerKind::Sgd: {
      SgdStep a{tensors(),         buf(0), clip, flr, static_cast<float>(cfg_.sgd_momentum), wd,
                cfg_.sgd_nesterov, step};
      be.sgd_step(a);
      break;
    }
  }
}

}  // namespace hwt
