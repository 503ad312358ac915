// Task heads on the final hidden states: sequence classification (pooled), token
// classification, their joint sum, and the causal LM head. Forward computes logits, per-row
// losses and, when training, the logits' gradients in the same pass.
#pragma once

#include "backend/fp8_linear.h"
#include "config/model_config.h"
#include "model/linear.h"

namespace hwt {

class Embeddings;

struct HeadTargets {
  Tensor seq_labels;                       // i32 [batch]
  Tensor token_labels;                     // i32 [rows]
  int64_t seq_valid = 0, token_valid = 0;  // labels that count (>= 0)
  float grad_multiplier = 1.0f;            // 1 / gradient-accumulation steps
  Tensor loss_scale{};  // f32 [1] on the device: dynamic loss scale the gradients carry (fp16)
};

class Heads {
 public:
  Heads(const ModelConfig& cfg, ParamStore& ps, const Embeddings& embed);
  void plan(ActivationArena& arena, DType dt, int64_t max_batch, int64_t max_rows);
  void forward(const StepContext& c, Tensor h, const HeadTargets& t) const;
  // A decode step of one sequence under an LM head: its product takes the final norm in
  // (decode_forward, `normed` the norm's fused_product of the last block's output).
  bool decodes_fused(const StepContext& c) const;
  void decode_forward(const StepContext& c, FusedLinearFwd normed) const;
  // Writes dh, the gradient of the hidden states.
  void backward(const StepContext& c, Tensor h, Tensor dh) const;

  Tensor seq_logits(const StepContext& c) const;
  Tensor token_logits(const StepContext& c) const;  // [rows, columns]: padded for an LM
  // The token logits' columns that are classes (the rest pad the LM's vocabulary).
  int64_t token_classes() const {
    return cfg_.head == Task::Lm ? cfg_.vocab_size : cfg_.num_token_labels;
  }
  Tensor seq_losses(const StepContext& c) const;
  Tensor token_losses(const StepContext& c) const;

 private:
  // Where an LM head's backward runs both products in fp8, the logits' gradient is written only
  // as its fp8 copies, by the loss, in the places the backward reads them (fp8_dy_places; the
  // loss keeps its rows' log-sum-exp in the scratch there between its two passes).
  Fp8DyPlaces lm_dy_places(const StepContext& c) const;

  const ModelConfig& cfg_;
  Linear cls_, token_;  // token_ is the LM head for Task::Lm
  ActivationArena::Slot pooled_ = 0, dpooled_ = 0, seq_logits_ = 0, seq_losses_ = 0,
                        token_logits_ = 0, token_losses_ = 0;
};

}  // namespace hwt
