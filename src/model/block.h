// One transformer block: self-attention (multi-head or grouped-query, QK-norm and rotary
// positions optional) and a feed-forward network (GELU or ReLU, or gated: SwiGLU, GeGLU), each
// wrapped in a residual connection with a norm (LayerNorm or RMSNorm) before (pre-LN: GPT-2, Llama)
// or after (post-LN: BERT) the sublayer.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "config/model_config.h"
#include "config/train_config.h"
#include "model/projection.h"

namespace hwt {

// Backward scratch shared by all blocks (activation gradients are consumed layer by layer), in
// stored widths: a [rows, hidden], b [rows, max(hidden, context)], ffn [rows, ffn],
// qkv [rows, qkv width], gate [rows, 2 * ffn] (gated MLPs only).
struct BlockScratch {
  ActivationArena::Slot a, b, ffn, qkv, gate;
};

class Block {
 public:
  Block(const ModelConfig& cfg, ParamStore& ps, int index);
  // With `shared`, the intermediate activations that `recompute` rebuilds are that block's slots
  // (train.recompute: each block's are rewritten by `recompute` just before its backward); the
  // output, which the next block reads, stays the block's own.
  void plan(ActivationArena& arena, DType dt, int64_t max_rows, const Block* shared = nullptr,
            Recompute recompute = Recompute::None);
  // Reserves the layer's KV cache for generation: max_batch sequences of `capacity` positions.
  void plan_kv_cache(ActivationArena& arena, DType dt, int64_t max_batch, int64_t capacity);
  // x: block input [rows, hidden] (kept for backward); returns the output tensor.
  Tensor forward(const StepContext& c, Tensor x) const;
  Tensor output(const StepContext& c) const;  // what forward returned, for backward
  // Rewrites, from the block's input x, the activations that `mode` does not keep; the ops are
  // the forward's own, on the same inputs, so the values are the same bit for bit.
  void recompute(const StepContext& c, Tensor x, Recompute mode) const;
  // dres holds the gradient of the block output on entry and of its input on return.
  void backward(const StepContext& c, Tensor x, Tensor dres, const BlockScratch& s) const;
  // The tensor-train projections by name ("attn.qkv", …), for reports of their contraction.
  std::vector<std::pair<std::string, const TtLinear*>> tt_layers() const;

 private:
  // The forward's parts that recomputation runs again. LN1(x) into its slot (pre-LN), or x.
  Tensor attention_input(const StepContext& c, Tensor x) const;
  // q, k, v (QK-norm, rotary positions) and the attention into the context slot, returned.
  Tensor self_attention(const StepContext& c, Tensor attn_in) const;
  // The MLP's first projection's output after its (gated) activation, from the MLP's input.
  Tensor mlp_activation(const StepContext& c, Tensor ffn_in) const;
  // A gated MLP's activation from its first projection's output.
  void gate(const StepContext& c) const;
  // fp8 training: the operand copies a gated unit writes for its neighbours' fp8 products in
  // place of its bf16 output and their casts (none where not every product reading that output
  // runs in fp8, or something else reads it): the down projection's x as it is and transposed,
  // in f_'s storage; the gate|up projection's dy, in d_pre's.
  Fp8Copies down_x_copies(const StepContext& c) const;
  Fp8Copies up_dy_copies(const StepContext& c, Tensor d_pre) const;
  // QK-norm of qkv's q and k heads, in place, the heads and statistics saved (model.qk_norm).
  void qk_norm(const StepContext& c, Tensor qkv) const;
  // A decode step's forward at one sequence (pre-LN, dense projections, no pruning): each
  // product takes the norm before it and the residual after it (fused_linear_forward), so the
  // step runs one matrix-vector kernel per product and no norm or residual kernels.
  bool decodes_fused(const StepContext& c) const;
  Tensor decode_forward(const StepContext& c, Tensor x) const;
  // y = norm `ln`(x), its statistics into the slots.
  void norm_forward(const StepContext& c, const NormParams& ln, ActivationArena::Slot mean,
                    ActivationArena::Slot rstd, Tensor x, Tensor y) const;
  AttentionDims attention_dims(const StepContext& c) const;
  Rope rope(const StepContext& c, Tensor qkv) const;
  // Rotary positions and attention: the training path, or generation's (StepContext::kv).
  void attend(const StepContext& c, Tensor qkv, Tensor ctx) const;
  KvCache kv_cache(const StepContext& c) const;
  // QK-norm's shape, and its saved q and k heads and their 1/rms (in the slots).
  HeadNormShape qk_norm_shape() const;
  Tensor qk_in(const StepContext& c) const;
  Tensor qk_rstd(const StepContext& c) const;
  // Adds to dres the gradient through norm `ln` (saved statistics in the slots) of the block
  // input x, given dy, the gradient of the norm's output.
  void input_norm_backward(const StepContext& c, const NormParams& ln, ActivationArena::Slot mean,
                           ActivationArena::Slot rstd, Tensor x, Tensor dy, Tensor dres) const;
  uint64_t site(int k) const {
    return 1 + 3 * static_cast<uint64_t>(index_) + static_cast<uint64_t>(k);
  }

  const ModelConfig& cfg_;
  int index_;
  NormParams ln1_, ln2_;
  NormParams q_norm_, k_norm_;  // QK-norm's gammas, [head_dim] each (model.qk_norm)
  Projection qkv_, out_, fc1_, fc2_;
  // Saved activations (slots in the arena). sum1_ is the pre-LN1 sum in post-LN blocks and
  // LN2's output (the FFN input) in pre-LN blocks. f_pre_ is the first FFN projection's output
  // (before the activation; gate | up when gated), f_ the activation's.
  ActivationArena::Slot ln1_out_ = 0, ln1_mean_ = 0, ln1_rstd_ = 0, qkv_act_ = 0, ctx_ = 0,
                        lse_ = 0, sum1_ = 0, x1_ = 0, ln2_mean_ = 0, ln2_rstd_ = 0, f_pre_ = 0,
                        f_ = 0, sum2_ = 0, out_act_ = 0, scratch_ = 0;
  // QK-norm: the q and k heads before it, and their 1/rms.
  ActivationArena::Slot qk_in_ = 0, qk_rstd_ = 0;
  // Generation's KV cache, [kv_batch_, kv_heads, kv_capacity_, head_dim] each.
  ActivationArena::Slot k_cache_ = 0, v_cache_ = 0;
  int64_t kv_batch_ = 0, kv_capacity_ = 0;
};

}  // namespace hwt
