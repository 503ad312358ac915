// Token + learned position embeddings, followed by layernorm (post-LN models, as BERT) and
// dropout.
#pragma once

#include "config/model_config.h"
#include "model/linear.h"

namespace hwt {

class Embeddings {
 public:
  Embeddings(const ModelConfig& cfg, ParamStore& ps);
  void plan(ActivationArena& arena, DType dt, int64_t max_rows);
  Tensor forward(const StepContext& c, Tensor ids) const;
  Tensor output(const StepContext& c) const;  // what forward returned, for backward
  // dx: gradient of the output (modified in place); scratch: [rows, hidden].
  void backward(const StepContext& c, Tensor ids, Tensor dx, Tensor scratch) const;
  ParamStore::Handle token_table() const { return tok_; }

 private:
  static constexpr uint64_t kDropSite = 0;
  const ModelConfig& cfg_;
  ParamStore::Handle tok_, pos_;
  LayerNormParams ln_;
  ActivationArena::Slot sum_ = 0, out_ = 0, mean_ = 0, rstd_ = 0;
};

}  // namespace hwt
