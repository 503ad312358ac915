#include "model/heads.h"

#include "model/embeddings.h"

namespace hwt {

Heads::Heads(const ModelConfig& cfg, ParamStore& ps, const Embeddings& embed) : cfg_(cfg) {
  const float std = static_cast<float>(cfg.init_std);
  const int64_t h = cfg.padded_hidden();
  const DimPad pad_h{h - cfg.hidden};  // zero input columns: the stream's padding
  if (has_sequence_labels(cfg.head))
    cls_ = Linear(ps, "head.classifier", h, cfg.num_labels, true, std, DimPad{}, pad_h);
  if (has_token_labels(cfg.head))
    token_ = Linear(ps, "head.tokens", h, cfg.num_token_labels, true, std, DimPad{}, pad_h);
  // The LM head has the embedding's padded rows: its logits beyond vocab_size are padding.
  const int64_t vocab = cfg.padded_vocab(), pad = vocab - cfg.vocab_size;
  if (cfg.head == Task::Lm)
    token_ = cfg.tie_embeddings ? Linear::tied(embed.token_table(), h, vocab)
                                : Linear(ps, "head.lm", h, vocab, false, std, DimPad{pad}, pad_h);
}

void Heads::plan(ActivationArena& arena, DType dt, int64_t max_batch, int64_t max_rows) {
  if (has_sequence_labels(cfg_.head)) {
    pooled_ = arena.reserve(dt, max_batch * cfg_.padded_hidden());
    dpooled_ = arena.reserve(dt, max_batch * cfg_.padded_hidden(), ArenaUse::Intermediate);
    seq_logits_ = arena.reserve(dt, max_batch * cls_.out());
    seq_losses_ = arena.reserve(DType::F32, max_batch);
  }
  if (has_token_outputs(cfg_.head)) {
    token_logits_ = arena.reserve(dt, max_rows * token_.out());
    token_losses_ = arena.reserve(DType::F32, max_rows);
  }
}

Tensor Heads::seq_logits(const StepContext& c) const {
  return c.arena.view(seq_logits_, Shape{c.batch, cls_.out()});
}
Tensor Heads::token_logits(const StepContext& c) const {
  return c.act(token_logits_, token_.out());
}
Tensor Heads::seq_losses(const StepContext& c) const {
  return c.arena.view(seq_losses_, Shape{c.batch});
}
Tensor Heads::token_losses(const StepContext& c) const {
  return c.arena.view(token_losses_, Shape{c.rows()});
}

void Heads::forward(const StepContext& c, Tensor h, const HeadTargets& t) const {
  Backend& be = c.backend;
  // Loss = mean over counted labels (per head), so each logit gradient is scaled by 1/count.
  auto scale = [&](int64_t valid) {
    return valid > 0 ? t.grad_multiplier / static_cast<float>(valid) : 0.0f;
  };
  if (has_sequence_labels(cfg_.head)) {
    be.set_scope("head.classifier", Phase::Forward);
    const Tensor pooled = c.arena.view(pooled_, Shape{c.batch, cfg_.padded_hidden()});
    be.pool_forward({h, pooled, c.key_lengths, c.seq, cfg_.pooling});
    const Tensor logits = seq_logits(c);
    cls_.forward(c, pooled, logits);
    be.cross_entropy({logits, t.seq_labels, seq_losses(c), c.training ? logits : Tensor{},
                      scale(t.seq_valid), t.loss_scale});
  }
  if (has_token_outputs(cfg_.head)) {
    be.set_scope(cfg_.head == Task::Lm ? "head.lm" : "head.tokens", Phase::Forward);
    const Tensor logits = token_logits(c);
    token_.forward(c, h, logits);
    // Generation's steps have no labels and read only the logits.
    if (c.kv != KvStep::None) return;
    CrossEntropy ce{logits,
                    t.token_labels,
                    token_losses(c),
                    c.training ? logits : Tensor{},
                    scale(t.token_valid),
                    t.loss_scale,
                    token_classes()};
    if (const Fp8DyPlaces to = lm_dy_places(c); to.made.dy.defined()) {
      ce.d_logits = {};
      ce.lse = to.scratch;
      ce.fp8 = fp8_out(to.made.dy, to.made.dy_t, token_.fp8(c, c.rows()).dy);
    }
    be.cross_entropy(ce);
  }
}

Fp8DyPlaces Heads::lm_dy_places(const StepContext& c) const {
  if (cfg_.head != Task::Lm || !c.training) return {};
  const Fp8Linear f = token_.fp8(c, c.rows());
  if (!f.input_grad || !f.weight_grad) return {};
  return fp8_dy_places(f, c.rows(), token_.out());
}

bool Heads::decodes_fused(const StepContext& c) const {
  return c.kv == KvStep::Decode && c.rows() == 1 && cfg_.head == Task::Lm;
}

void Heads::decode_forward(const StepContext& c, FusedLinearFwd normed) const {
  c.backend.set_scope("head.lm", Phase::Forward);
  normed.y = token_logits(c);
  token_.forward_fused(c, normed);
}

void Heads::backward(const StepContext& c, Tensor h, Tensor dh) const {
  Backend& be = c.backend;
  if (has_token_outputs(cfg_.head)) {
    be.set_scope(cfg_.head == Task::Lm ? "head.lm" : "head.tokens", Phase::Backward);
    token_.backward(c, h, token_logits(c), dh, false, Activation::None, {}, lm_dy_places(c).made);
  } else {
    be.fill({dh, 0.0f});
  }
  if (has_sequence_labels(cfg_.head)) {
    be.set_scope("head.classifier", Phase::Backward);
    const Tensor pooled = c.arena.view(pooled_, Shape{c.batch, cfg_.padded_hidden()});
    const Tensor dpooled = c.arena.view(dpooled_, Shape{c.batch, cfg_.padded_hidden()});
    cls_.backward(c, pooled, seq_logits(c), dpooled);
    be.pool_backward({dpooled, dh, c.key_lengths, c.seq, cfg_.pooling});
  }
}

}  // namespace hwt
