// Runtime pruning of one model after TransCODE (model.prune.*, docs/training.md): DynaTran on
// inference activations, DynaProp on parameter gradients, and optionally on the activation
// gradients the dense layers' backward writes. Each pruning point has a zero counter in device
// memory (prune_small adds to it); counts() reads them, so only the callers that ask sync.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "backend/backend.h"
#include "config/model_config.h"
#include "model/param_store.h"

namespace hwt {

// Where values are pruned; a block point counts every block's tensors together.
enum class PrunePoint : uint8_t {
  Qkv,          // DynaTran: the q|k|v projection's output
  AttnScores,   // DynaTran: the scaled attention scores, inside the attention op
  AttnProbs,    // DynaTran: the softmax probabilities, inside the attention op
  AttnContext,  // DynaTran: the attention context (the input of attn.out)
  AttnOut,      // DynaTran: attn.out's output
  Fc1,          // DynaTran: fc1's activated output
  Fc2,          // DynaTran: fc2's output
  QkvGrad,      // activation gradients: the input gradient qkv's backward writes
  AttnOutGrad,  // ... attn.out's
  Fc1Grad,      // ... fc1's
  Fc2Grad,      // ... fc2's
  ParamGrads,   // DynaProp: every parameter gradient
  // DynaProp's count over the dense layers' weight matrices alone (ParamInfo::linear_weight),
  // a part of ParamGrads: the weight gradients hwt sim's GEMMs write.
  LinearWeightGrads,
};
constexpr size_t kPrunePoints = 13;

// "attn.qkv", "attn.scores", "grad.mlp.fc1", "param_grads", "param_grads.linear": the names
// in metrics.jsonl and sparsity.json.
std::string_view prune_point_name(PrunePoint p);

// Zeros among the elements a point pruned (zeros after pruning, so zeros already there count).
struct PruneCount {
  PrunePoint point;
  uint64_t zeros = 0, elements = 0;
  double sparsity() const {
    return elements > 0 ? static_cast<double>(zeros) / static_cast<double>(elements) : 0.0;
  }
};

class Pruning {
 public:
  // `params`: allocated; where its Linear weights lie in the flat gradient buffer.
  Pruning(const PruneConfig& cfg, Backend& backend, const ParamStore& params);

  // DynaTran on an inference activation (model.prune.tau_infer; off: nothing).
  void activation(PrunePoint p, Tensor x);
  // DynaTran on the attention scores and probabilities, for the attention op to apply
  // (inactive when tau_infer is 0).
  AttentionPrune attention() const;
  // An activation gradient a dense layer's backward wrote (model.prune.tau_act_grad).
  void activation_grad(PrunePoint p, Tensor dx);
  // DynaProp (model.prune.tau_train) for the optimizer step over `count` elements of the flat
  // gradient buffer from `offset` on (a ZeRO-1 shard, or all of it), which prunes and counts
  // (GradPrune); inactive when tau_train is 0. Call once per step: it counts the elements.
  GradPrune param_grads(int64_t offset, int64_t count);

  // The points that pruned anything so far, with their totals (param_grads includes
  // param_grads.linear). Downloads: synchronises.
  std::vector<PruneCount> counts() const;

 private:
  void prune(PrunePoint p, Tensor x, float tau);
  Tensor ranges_tensor() const;  // part_ranges_ as i32 [4k]

  // [begin, end) element ranges of the flat buffers holding Linear weights, in order, merged.
  std::vector<std::pair<int64_t, int64_t>> linear_weights_;
  // Those ranges cut to the optimizer's part and shifted to its start, on the device; the
  // part's element counts, all and Linear.
  int64_t part_offset_ = -1, part_count_ = 0;
  uint64_t part_linear_ = 0;
  std::unique_ptr<DeviceBuffer> part_ranges_;

  PruneConfig cfg_;
  Backend& backend_;
  DeviceBuffer counters_;  // a 64-bit zero count per point
  // The attention op's own counters: zero scores, zero probabilities, scores (AttentionPrune).
  DeviceBuffer attention_counters_;
  std::array<uint64_t, kPrunePoints> elements_{};
};

}  // namespace hwt
