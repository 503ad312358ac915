// Token embeddings plus learned positions (model.position = "learned"), followed by a norm (post-LN
// models, as BERT) and dropout. The token table is dense or a tensor-train matrix
// (model.tt.embedding).
#pragma once

#include <optional>

#include "config/model_config.h"
#include "model/linear.h"
#include "model/tt_embedding.h"

namespace hwt {

class Embeddings {
 public:
  Embeddings(const ModelConfig& cfg, ParamStore& ps);
  void plan(ActivationArena& arena, DType dt, int64_t max_rows);
  Tensor forward(const StepContext& c, Tensor ids) const;
  Tensor output(const StepContext& c) const;  // what forward returned, for backward
  // dx: gradient of the output (modified in place); scratch: [rows, hidden].
  void backward(const StepContext& c, Tensor ids, Tensor dx, Tensor scratch) const;
  // The dense token table (the tied LM head's weight); a TT table has none.
  ParamStore::Handle token_table() const;
  // Whether a decode step reads each sequence's position from the device (one op for the
  // batch) rather than from the host (a TT table with learned positions: one op per sequence),
  // so that a recorded step can run again for the next token.
  bool decode_positions_on_device() const { return !(tt_ && learned()); }

 private:
  static constexpr uint64_t kDropSite = 0;
  bool learned() const { return cfg_.position == Position::Learned; }
  const ModelConfig& cfg_;
  std::optional<TtEmbedding> tt_;
  ParamStore::Handle tok_ = 0, pos_ = 0;
  NormParams ln_;
  ActivationArena::Slot sum_ = 0, out_ = 0, mean_ = 0, rstd_ = 0;
};

}  // namespace hwt
