#include "model/pruning.h"

namespace hwt {

std::string_view prune_point_name(PrunePoint p) {
  switch (p) {
    case PrunePoint::Qkv:
      return "attn.qkv";
    case PrunePoint::AttnContext:
      return "attn.context";
    case PrunePoint::AttnOut:
      return "attn.out";
    case PrunePoint::Fc1:
      return "mlp.fc1";
    case PrunePoint::Fc2:
      return "mlp.fc2";
    case PrunePoint::QkvGrad:
      return "grad.attn.qkv";
    case PrunePoint::AttnOutGrad:
      return "grad.attn.out";
    case PrunePoint::Fc1Grad:
      return "grad.mlp.fc1";
    case PrunePoint::Fc2Grad:
      return "grad.mlp.fc2";
    case PrunePoint::ParamGrads:
      return "param_grads";
  }
  return "?";
}

Pruning::Pruning(const PruneConfig& cfg, Backend& backend)
    : cfg_(cfg), backend_(backend), counters_(backend, kPrunePoints * sizeof(uint64_t)) {
  backend_.fill({counters_.tensor(DType::I32, Shape{2 * static_cast<int64_t>(kPrunePoints)}), 0});
}

void Pruning::activation(PrunePoint p, Tensor x) {
  if (cfg_.tau_infer > 0) prune(p, x, static_cast<float>(cfg_.tau_infer), {});
}

void Pruning::activation_grad(PrunePoint p, Tensor dx) {
  if (cfg_.tau_act_grad > 0) prune(p, dx, static_cast<float>(cfg_.tau_act_grad), {});
}

void Pruning::param_grads(Tensor grads, const GradClip& clip) {
  if (cfg_.tau_train > 0)
    prune(PrunePoint::ParamGrads, grads, static_cast<float>(cfg_.tau_train), clip);
}

void Pruning::prune(PrunePoint p, Tensor x, float tau, const GradClip& clip) {
  const size_t i = static_cast<size_t>(p);
  elements_[i] += static_cast<uint64_t>(x.numel());
  backend_.prune_small(
      {x, tau, counters_.tensor(DType::I32, Shape{2}, i * sizeof(uint64_t)), clip});
}

std::vector<PruneCount> Pruning::counts() const {
  std::array<uint64_t, kPrunePoints> zeros{};
  backend_.download(zeros.data(),
                    counters_.tensor(DType::I32, Shape{2 * static_cast<int64_t>(kPrunePoints)}));
  std::vector<PruneCount> out;
  for (size_t i = 0; i < kPrunePoints; ++i)
    if (elements_[i] > 0) out.push_back({static_cast<PrunePoint>(i), zeros[i], elements_[i]});
  return out;
}

}  // namespace hwt
