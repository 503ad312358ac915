#include "model/pruning.h"

#include <algorithm>

namespace hwt {

std::string_view prune_point_name(PrunePoint p) {
  switch (p) {
    case PrunePoint::Qkv:
      return "attn.qkv";
    case PrunePoint::AttnScores:
      return "attn.scores";
    case PrunePoint::AttnProbs:
      return "attn.probs";
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
    case PrunePoint::LinearWeightGrads:
      return "param_grads.linear";
  }
  return "?";
}

Pruning::Pruning(const PruneConfig& cfg, Backend& backend, const ParamStore& params)
    : cfg_(cfg),
      backend_(backend),
      counters_(backend, kPrunePoints * sizeof(uint64_t)),
      attention_counters_(backend, 3 * sizeof(uint64_t)) {
  backend_.fill({counters_.tensor(DType::I32, Shape{2 * static_cast<int64_t>(kPrunePoints)}), 0});
  backend_.fill({attention_counters_.tensor(DType::I32, Shape{6}), 0});
  for (const ParamInfo& p : params.infos())
    if (p.linear_weight) linear_weights_.emplace_back(p.offset, p.offset + p.shape.numel());
  std::sort(linear_weights_.begin(), linear_weights_.end());
  std::vector<std::pair<int64_t, int64_t>> merged;
  for (const auto& r : linear_weights_)
    if (!merged.empty() && merged.back().second == r.first)
      merged.back().second = r.second;
    else
      merged.push_back(r);
  linear_weights_ = std::move(merged);
}

void Pruning::activation(PrunePoint p, Tensor x) {
  if (cfg_.tau_infer > 0) prune(p, x, static_cast<float>(cfg_.tau_infer));
}

AttentionPrune Pruning::attention() const {
  if (cfg_.tau_infer <= 0) return {};
  return {static_cast<float>(cfg_.tau_infer), attention_counters_.tensor(DType::I32, Shape{6})};
}

void Pruning::activation_grad(PrunePoint p, Tensor dx) {
  if (cfg_.tau_act_grad > 0) prune(p, dx, static_cast<float>(cfg_.tau_act_grad));
}

GradPrune Pruning::param_grads(int64_t offset, int64_t count) {
  if (cfg_.tau_train <= 0) return {};
  if (offset != part_offset_ || count != part_count_) {
    std::vector<int64_t> ranges;  // [begin, end) pairs within the part, relative to offset
    part_linear_ = 0;
    for (const auto& [begin, end] : linear_weights_) {
      const int64_t b = std::max(begin, offset), e = std::min(end, offset + count);
      if (b >= e) continue;
      ranges.insert(ranges.end(), {b - offset, e - offset});
      part_linear_ += static_cast<uint64_t>(e - b);
    }
    part_ranges_.reset();
    if (!ranges.empty()) {
      part_ranges_ = std::make_unique<DeviceBuffer>(backend_, ranges.size() * sizeof(int64_t));
      backend_.upload(ranges_tensor(), ranges.data());
    }
    part_offset_ = offset;
    part_count_ = count;
  }
  // The step counts into two adjacent counters: outside the ranges, then inside.
  static_assert(static_cast<int>(PrunePoint::LinearWeightGrads) ==
                static_cast<int>(PrunePoint::ParamGrads) + 1);
  const auto all = static_cast<size_t>(PrunePoint::ParamGrads),
             linear = static_cast<size_t>(PrunePoint::LinearWeightGrads);
  elements_[all] += static_cast<uint64_t>(count) - part_linear_;
  elements_[linear] += part_linear_;
  return {static_cast<float>(cfg_.tau_train),
          counters_.tensor(DType::I32, Shape{4}, all * sizeof(uint64_t)),
          part_ranges_ ? ranges_tensor() : Tensor{}};
}

Tensor Pruning::ranges_tensor() const {
  return part_ranges_->tensor(DType::I32,
                              Shape{static_cast<int64_t>(part_ranges_->bytes() / sizeof(int32_t))});
}

void Pruning::prune(PrunePoint p, Tensor x, float tau) {
  const size_t i = static_cast<size_t>(p);
  elements_[i] += static_cast<uint64_t>(x.numel());
  backend_.prune_small({x, tau, counters_.tensor(DType::I32, Shape{2}, i * sizeof(uint64_t))});
}

std::vector<PruneCount> Pruning::counts() const {
  std::array<uint64_t, kPrunePoints> zeros{};
  backend_.download(zeros.data(),
                    counters_.tensor(DType::I32, Shape{2 * static_cast<int64_t>(kPrunePoints)}));
  std::array<uint64_t, kPrunePoints> elements = elements_;
  std::array<uint64_t, 3> attention{};  // zero scores, zero probabilities, scores
  backend_.download(attention.data(), attention_counters_.tensor(DType::I32, Shape{6}));
  const auto scores = static_cast<size_t>(PrunePoint::AttnScores),
             probs = static_cast<size_t>(PrunePoint::AttnProbs);
  zeros[scores] = attention[0];
  zeros[probs] = attention[1];
  elements[scores] = elements[probs] = attention[2];
  const auto all = static_cast<size_t>(PrunePoint::ParamGrads),
             linear = static_cast<size_t>(PrunePoint::LinearWeightGrads);
  zeros[all] += zeros[linear];
  elements[all] += elements[linear];
  std::vector<PruneCount> out;
  for (size_t i = 0; i < kPrunePoints; ++i)
    if (elements[i] > 0) out.push_back({static_cast<PrunePoint>(i), zeros[i], elements[i]});
  return out;
}

}  // namespace hwt
