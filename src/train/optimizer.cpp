#include "train/optimizer.h"

#include <algorithm>

#include "core/error.h"

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
  names_ = names;
  norm_sq_ = DeviceBuffer(params.backend(), 4);
  count_ = shard_size_ = params.count();
  allocate_state(shard_size_);
}

void Optimizer::allocate_state(int64_t elements) {
  state_.clear();
  for (const std::string& n : names_)
    state_.emplace_back(n, DeviceBuffer(params_.backend(), static_cast<size_t>(elements) * 4));
  zero_state();
}

void Optimizer::shard(Communicator& comm) {
  const int64_t ranks = comm.size(), storage = params_.storage();
  HWT_CHECK(storage % (ranks * 64) == 0, "storage {} does not split into {} shards", storage,
            ranks);
  comm_ = &comm;
  shard_size_ = storage / ranks;
  offset_ = shard_size_ * comm.rank();
  count_ = std::clamp<int64_t>(params_.count() - offset_, 0, shard_size_);
  grad_shard_ = DeviceBuffer(params_.backend(), static_cast<size_t>(shard_size_) * 4);
  allocate_state(shard_size_);
}

void Optimizer::zero_state() {
  for (auto& [name, buf] : state_)
    params_.backend().fill({buf.tensor(DType::F32, Shape{shard_size_}), 0.0f});
}

std::vector<std::pair<std::string, Tensor>> Optimizer::state() const {
  std::vector<std::pair<std::string, Tensor>> out;
  for (const auto& [name, buf] : state_)
    out.emplace_back(name, buf.tensor(DType::F32, Shape{shard_size_}));
  return out;
}

size_t Optimizer::state_bytes() const {
  return state_.size() * static_cast<size_t>(shard_size_) * 4;
}

Optimizer::FullState Optimizer::full_state() const {
  FullState full;
  for (const auto& [name, t] : state()) {
    if (!comm_) {
      full.tensors.emplace_back(name, t);
      continue;
    }
    DeviceBuffer& all =
        full.buffers.emplace_back(params_.backend(), static_cast<size_t>(params_.storage()) * 4);
    const Tensor gathered = all.tensor(DType::F32, Shape{params_.storage()});
    comm_->all_gather(t, gathered);
    full.tensors.emplace_back(name, gathered.flat_slice(0, params_.count()));
  }
  if (comm_) comm_->wait();
  return full;
}

Tensor Optimizer::grads() const {
  if (!comm_) return params_.grads_flat();
  return grad_shard_.tensor(DType::F32, Shape{count_});
}

OptimizerTensors Optimizer::tensors() const {
  const Tensor compute = params_.compute_flat();
  return {params_.params_flat().flat_slice(offset_, count_), grads(),
          compute.defined() ? compute.flat_slice(offset_, count_) : Tensor{},
          std::clamp<int64_t>(params_.n_decay() - offset_, 0, count_)};
}

// Every rank's updated shard (masters and, in mixed precision, the compute copy) to every rank.
void Optimizer::gather_parameters() {
  for (const Tensor& all : {params_.params_storage(), params_.compute_storage()})
    if (all.defined()) comm_->all_gather(all.flat_slice(offset_, shard_size_), all);
  comm_->wait();
}

void Optimizer::step(int64_t step, double lr) {
  Backend& be = params_.backend();
  be.set_scope("optimizer", Phase::Optimizer);
  if (comm_) {
    comm_->reduce_scatter_sum(params_.grads_storage(),
                              grad_shard_.tensor(DType::F32, Shape{shard_size_}));
    comm_->wait();
  }
  GradClip clip;
  if (computes_grad_norm()) {
    clip.grad_norm_sq = grad_norm_sq();
    clip.max_norm = max_grad_norm_;
    clip.loss_scale = loss_scale_;
    if (count_ > 0)
      be.sum_squares({grads(), clip.grad_norm_sq});
    else
      be.fill({clip.grad_norm_sq, 0.0f});
    if (comm_) {  // the shards' squared norms add up to the whole gradient's
      comm_->all_reduce_sum(clip.grad_norm_sq);
      comm_->wait();
    }
  }
  if (count_ == 0) {  // a rank whose shard lies wholly in the storage's padding
    gather_parameters();
    return;
  }
  // DynaProp inside the step; the norm above is of the unpruned gradients (pruning comes after
  // unscaling and clipping).
  OptimizerTensors t = tensors();
  if (pruning_) t.prune = pruning_->param_grads(offset_, count_);
  auto buf = [&](size_t i) { return state_[i].second.tensor(DType::F32, Shape{count_}); };
  // The config's hyper-parameters in float with this step's bias corrections, computed here
  // once for whichever backend runs the step.
  auto f = [](double v) { return static_cast<float>(v); };
  const float flr = f(lr), wd = f(cfg_.weight_decay);
  switch (cfg_.name) {
    case OptimizerKind::AdamW:
      be.adamw_step(
          {t, buf(0), buf(1), clip,
           at_step(AdamWHyper{flr, f(cfg_.adamw_beta1), f(cfg_.adamw_beta2), f(cfg_.eps), wd},
                   step)});
      break;
    case OptimizerKind::Adan:
      be.adan_step({t, buf(0), buf(1), buf(2), buf(3), clip,
                    at_step(AdanHyper{flr, f(cfg_.adan_beta1), f(cfg_.adan_beta2),
                                      f(cfg_.adan_beta3), f(cfg_.eps), wd, cfg_.adan_no_prox},
                            step)});
      break;
    case OptimizerKind::Sgd:
      be.sgd_step({t, buf(0), clip,
                   at_step(SgdHyper{flr, f(cfg_.sgd_momentum), wd, cfg_.sgd_nesterov}, step)});
      break;
  }
  if (comm_) gather_parameters();
}

}  // namespace hwt
