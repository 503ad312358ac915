#include "model/embeddings.h"

namespace hwt {

Embeddings::Embeddings(const ModelConfig& cfg, ParamStore& ps) : cfg_(cfg) {
  const float std = static_cast<float>(cfg.init_std);
  const int64_t h = cfg.padded_hidden();
  const DimPad pad_h{h - cfg.hidden};  // zero columns of both tables
  if (cfg.tt.embedding.enabled())
    tt_.emplace(ps, "embed.tokens", cfg.tt.embedding, std);
  else
    tok_ = ps.add("embed.tokens", Shape{cfg.padded_vocab(), h}, true, Init::Normal, std,
                  DimPad{cfg.padded_vocab() - cfg.vocab_size}, pad_h);
  if (cfg.position == Position::Learned)
    pos_ =
        ps.add("embed.positions", Shape{cfg.max_seq, h}, true, Init::Normal, std, DimPad{}, pad_h);
  if (cfg.norm == NormPlacement::Post)
    ln_ = NormParams(ps, "embed.ln", h, pad_h.pad, cfg.norm_kind);
}

ParamStore::Handle Embeddings::token_table() const {
  HWT_CHECK(!tt_, "a tensor-train token table has no dense matrix");
  return tok_;
}

void Embeddings::plan(ActivationArena& arena, DType dt, int64_t max_rows) {
  sum_ = arena.reserve(dt, max_rows * cfg_.padded_hidden());
  if (cfg_.norm == NormPlacement::Pre) return;
  out_ = arena.reserve(dt, max_rows * cfg_.padded_hidden());
  mean_ = arena.reserve(DType::F32, max_rows);
  rstd_ = arena.reserve(DType::F32, max_rows);
}

Tensor Embeddings::output(const StepContext& c) const {
  return c.act(cfg_.norm == NormPlacement::Pre ? sum_ : out_, cfg_.padded_hidden());
}

Tensor Embeddings::forward(const StepContext& c, Tensor ids) const {
  Backend& be = c.backend;
  be.set_scope("embed", Phase::Forward);
  const Tensor sum = c.act(sum_, cfg_.padded_hidden());
  const Tensor pos = learned() ? c.params.compute(pos_) : Tensor{};
  auto embed = [&](Tensor row_ids, Tensor row_pos, Tensor out) {
    if (tt_)
      tt_->forward(c, row_ids, row_pos, out);
    else
      be.embedding_forward({row_ids, c.params.compute(tok_), row_pos, out, c.seq});
  };
  if (c.kv == KvStep::Decode && learned() && !tt_) {
    // One token per sequence, each at its own position: its row of the position table.
    be.embedding_forward({ids, c.params.compute(tok_), pos, sum, c.seq, c.positions_device});
  } else if (c.kv == KvStep::Decode && learned()) {
    for (int64_t b = 0; b < c.batch; ++b)
      embed(ids.flat_slice(b, 1), pos.row_slice(c.positions[static_cast<size_t>(b)], 1),
            sum.row_slice(b, 1));
  } else {
    embed(ids, pos, sum);
  }
  Tensor out = sum;
  if (cfg_.norm == NormPlacement::Post) {
    out = c.act(out_, cfg_.padded_hidden());
    be.layernorm_forward({sum, ln_.gamma(c), ln_.beta(c), out, ln_.mean(c, mean_),
                          c.arena.view(rstd_, Shape{c.rows()}), static_cast<float>(cfg_.ln_eps),
                          cfg_.hidden, cfg_.norm_kind});
  }
  const Dropout drop = c.dropout(cfg_.dropout, kDropSite);
  if (drop.active()) be.dropout_forward({out, out, drop});
  return out;
}

void Embeddings::backward(const StepContext& c, Tensor ids, Tensor dx, Tensor scratch) const {
  Backend& be = c.backend;
  be.set_scope("embed", Phase::Backward);
  const Dropout drop = c.dropout(cfg_.dropout, kDropSite);
  if (drop.active()) be.dropout_backward({dx, dx, drop});
  Tensor d_sum = dx;
  if (cfg_.norm == NormPlacement::Post) {
    be.layernorm_backward(ln_.backward_args(c, mean_, rstd_, c.act(sum_, cfg_.padded_hidden()), dx,
                                            scratch, cfg_.hidden));
    d_sum = scratch;
  }
  const Tensor d_pos = learned() ? c.params.grad(pos_) : Tensor{};
  if (tt_)
    tt_->backward(c, ids, d_sum, d_pos);
  else
    be.embedding_backward({ids, d_sum, c.params.grad(tok_), d_pos, c.seq});
}

}  // namespace hwt
