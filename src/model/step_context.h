// What every layer needs during one forward/backward pass.
#pragma once

#include <cstdint>
#include <span>

#include "backend/backend.h"
#include "core/philox.h"
#include "model/activation_arena.h"
#include "model/fp8_linears.h"
#include "model/param_store.h"
#include "model/pruning.h"

namespace hwt {

// Generation with a KV cache (Model::prefill, Model::decode): a prefill stores each layer's k and
// v as it runs the prompt; a decode step runs one token per sequence against the cache.
enum class KvStep { None, Prefill, Decode };

struct StepContext {
  Backend& backend;
  ParamStore& params;
  ActivationArena& arena;
  DType act_dtype = DType::F32;
  int64_t batch = 0, seq = 0;  // this step's padded shape
  bool training = false;
  // A block's forward run again in the backward (train.recompute): its ops are backward work.
  bool recompute = false;
  uint64_t step_seed = 0;      // differs per micro-step; dropout seeds derive from it
  Tensor key_lengths;          // i32 [batch]
  Pruning* pruning = nullptr;  // model.prune: set when any threshold is on
  Tensor rope_cos, rope_sin;   // f32 [max_seq, rotary_dim / 2] (model.position = "rope")
  KvStep kv = KvStep::None;
  // Decode: each sequence's position (the cached length before this token), on the host and as
  // i32 [batch] on the device.
  std::span<const int32_t> positions{};
  Tensor positions_device{};
  // train.precision = "fp8": the linear layers whose products run in fp8 (training steps only).
  const Fp8Linears* fp8 = nullptr;

  int64_t rows() const { return batch * seq; }
  Tensor act(ActivationArena::Slot s, int64_t cols) const {
    return arena.view(s, Shape{rows(), cols});
  }
  // Dropout of one site (a fixed id per place in the model); inactive in evaluation.
  Dropout dropout(double p, uint64_t site) const {
    if (!training || p <= 0.0) return {};
    return Dropout{static_cast<float>(p), mix_seed(step_seed ^ mix_seed(site))};
  }
  // DynaTran: inference activations only, never a training forward.
  void prune_activation(PrunePoint p, Tensor x) const {
    if (pruning && !training) pruning->activation(p, x);
  }
  AttentionPrune attention_prune() const {
    return pruning && !training ? pruning->attention() : AttentionPrune{};
  }
  void prune_activation_grad(PrunePoint p, Tensor dx) const {
    if (pruning) pruning->activation_grad(p, dx);
  }
};

}  // namespace hwt
