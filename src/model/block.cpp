#include "model/block.h"

#include <cmath>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "backend/fp8_linear.h"

namespace hwt {
namespace {

enum class TtRole { Plain, Qkv, Swapped };

// The chain of a layer kind's TT factors: as given; for the fused q|k|v projection with the
// first out factor tripled; for the second feed-forward layer with out and in swapped (each
// part keeping its ranks, the middle rank between them).
std::optional<TtChain> tt_chain(const TtFactors& f, TtRole role) {
  if (!f.enabled()) return std::nullopt;
  std::vector<int64_t> out = f.out, in = f.in, ranks = f.ranks;
  if (role == TtRole::Qkv) out[0] *= 3;
  if (role == TtRole::Swapped) {
    const size_t p = out.size();
    std::swap(out, in);
    ranks.assign(f.ranks.begin() + static_cast<std::ptrdiff_t>(p), f.ranks.end());
    ranks.push_back(f.ranks[p - 1]);
    ranks.insert(ranks.end(), f.ranks.begin(),
                 f.ranks.begin() + static_cast<std::ptrdiff_t>(p - 1));
  }
  return tt_linear_chain(out, in, ranks);
}

// Both layouts of a [rows, cols] fp8 tensor in `storage`: as it is, then transposed.
std::pair<Tensor, Tensor> both_layouts(const Tensor& storage, DType dt) {
  const int64_t rows = storage.rows(), cols = storage.cols();
  return {fp8_copy_in(storage, 0, dt, rows, cols),
          fp8_copy_in(storage, rows * cols, dt, cols, rows)};
}

}  // namespace

Block::Block(const ModelConfig& cfg, ParamStore& ps, int index) : cfg_(cfg), index_(index) {
  const std::string p = fmt::format("layers.{}.", index);
  const float std = static_cast<float>(cfg.init_std);
  const TtFactors &attn = cfg.tt.attention, &ffn_tt = cfg.tt.ffn;
  // Padded widths (hidden, each head, FFN) are zero rows and columns of the weights on their
  // side, and zero entries of the biases, gamma and beta: the padded activations are zero
  // (act(0) = 0 in the FFN), the padded parameters get zero gradients and stay zero.
  const int64_t h = cfg.padded_hidden(), hidden_pad = h - cfg.hidden;
  const int64_t head = cfg.padded_head_dim(), ctx = cfg.padded_context();
  const DimPad pad_h{hidden_pad},
      per_head = head > cfg.head_dim() ? DimPad{head - cfg.head_dim(), head} : DimPad{};
  ln1_ = NormParams(ps, p + "ln1", h, hidden_pad, cfg.norm_kind);
  qkv_ = Projection(ps, p + "attn.qkv", h, cfg.padded_qkv(), cfg.has_qkv_bias(), std,
                    tt_chain(attn, TtRole::Qkv), per_head, pad_h);
  out_ = Projection(ps, p + "attn.out", ctx, h, cfg.bias, std, tt_chain(attn, TtRole::Plain), pad_h,
                    per_head);
  ln2_ = NormParams(ps, p + "ln2", h, hidden_pad, cfg.norm_kind);
  if (cfg.qk_norm) {
    const int64_t head_pad = head - cfg.head_dim();
    q_norm_ = NormParams(ps, p + "attn.q_norm", head, head_pad, NormKind::RmsNorm);
    k_norm_ = NormParams(ps, p + "attn.k_norm", head, head_pad, NormKind::RmsNorm);
  }
  // A gated MLP's first projection is the gate's rows, then the up projection's, each padded.
  const int64_t ffn = cfg.padded_ffn(), fc1_out = cfg.gated() ? 2 * ffn : ffn;
  const DimPad pad_ffn{ffn - cfg.ffn, ffn};
  fc1_ = Projection(ps, p + "mlp.fc1", h, fc1_out, cfg.bias, std, tt_chain(ffn_tt, TtRole::Plain),
                    pad_ffn, pad_h);
  fc2_ = Projection(ps, p + "mlp.fc2", ffn, h, cfg.bias, std, tt_chain(ffn_tt, TtRole::Swapped),
                    pad_h, pad_ffn);
}

std::vector<std::pair<std::string, const TtLinear*>> Block::tt_layers() const {
  std::vector<std::pair<std::string, const TtLinear*>> out;
  for (const auto& [name, proj] : {std::pair{"attn.qkv", &qkv_}, std::pair{"attn.out", &out_},
                                   std::pair{"mlp.fc1", &fc1_}, std::pair{"mlp.fc2", &fc2_}})
    if (proj->tt()) out.emplace_back(name, proj->tt());
  return out;
}

void Block::plan(ActivationArena& arena, DType dt, int64_t max_rows, const Block* shared,
                 Recompute recompute) {
  const int64_t h = cfg_.padded_hidden(), ctx = cfg_.padded_context(), ffn = cfg_.padded_ffn();
  const bool pre = cfg_.norm == NormPlacement::Pre;
  const std::string name = fmt::format("layers.{}.", index_);
  // Each activation is the shared block's slot from the first mode that recomputes it on.
  const auto slot = [&](ActivationArena::Slot Block::*s, Recompute from, DType t, int64_t n,
                        ArenaUse use = ArenaUse::Activation) {
    if (shared && shared != this && recompute >= from)
      this->*s = shared->*s;
    else
      this->*s = arena.reserve(t, n, use);
  };
  constexpr Recompute norm_act = Recompute::NormAct, attention = Recompute::Attention,
                      full = Recompute::Full;
  // Pre-LN: LN2's output is sum1_ and the residual sum x1_; post-LN: the other way round.
  const Recompute sum1_from = pre ? norm_act : full, x1_from = pre ? full : norm_act;
  arena.set_owner(name + "attn");
  if (pre) slot(&Block::ln1_out_, norm_act, dt, max_rows * h);
  slot(&Block::ln1_mean_, norm_act, DType::F32, max_rows);
  slot(&Block::ln1_rstd_, norm_act, DType::F32, max_rows);
  slot(&Block::qkv_act_, attention, dt, max_rows * cfg_.padded_qkv());
  if (cfg_.qk_norm) {
    const int64_t normed = qk_norm_shape().normed();
    slot(&Block::qk_in_, attention, dt, max_rows * normed * cfg_.padded_head_dim());
    slot(&Block::qk_rstd_, attention, DType::F32, max_rows * normed);
  }
  slot(&Block::ctx_, attention, dt, max_rows * ctx);
  slot(&Block::lse_, attention, DType::F32, cfg_.heads * max_rows);
  slot(&Block::sum1_, sum1_from, dt, max_rows * h);
  slot(&Block::x1_, x1_from, dt, max_rows * h);
  arena.set_owner(name + "mlp");
  slot(&Block::ln2_mean_, sum1_from, DType::F32, max_rows);
  slot(&Block::ln2_rstd_, sum1_from, DType::F32, max_rows);
  // An ungated MLP's activation is its first GEMM's epilogue: recomputing it runs that GEMM.
  slot(&Block::f_pre_, cfg_.gated() ? full : norm_act, dt, max_rows * fc1_.out());
  slot(&Block::f_, norm_act, dt, max_rows * ffn);
  if (!pre) slot(&Block::sum2_, full, dt, max_rows * h);
  out_act_ = arena.reserve(dt, max_rows * h);
  slot(&Block::scratch_, norm_act, dt, max_rows * h, ArenaUse::Intermediate);
  for (const auto& [part, proj] : {std::pair{"attn", &qkv_}, std::pair{"attn", &out_},
                                   std::pair{"mlp", &fc1_}, std::pair{"mlp", &fc2_}}) {
    arena.set_owner(name + part);
    proj->plan(arena, dt, max_rows);
  }
}

void Block::plan_kv_cache(ActivationArena& arena, DType dt, int64_t max_batch, int64_t capacity) {
  arena.set_owner(fmt::format("layers.{}.attn", index_));
  kv_batch_ = max_batch;
  kv_capacity_ = capacity;
  const int64_t n = max_batch * cfg_.kv() * capacity * cfg_.padded_head_dim();
  k_cache_ = arena.reserve(dt, n);
  v_cache_ = arena.reserve(dt, n);
}

KvCache Block::kv_cache(const StepContext& c) const {
  HWT_CHECK(kv_capacity_ > 0, "generation needs Model::plan with a KV cache capacity");
  const Shape s{kv_batch_, cfg_.kv(), kv_capacity_, cfg_.padded_head_dim()};
  return {c.arena.view(k_cache_, s), c.arena.view(v_cache_, s)};
}

void Block::attend(const StepContext& c, Tensor qkv, Tensor ctx) const {
  Backend& be = c.backend;
  const bool rotary = cfg_.position == Position::Rope;
  if (c.kv != KvStep::Decode) {
    if (rotary) be.rope_forward(rope(c, qkv));
    if (c.kv == KvStep::Prefill)
      be.kv_append({qkv, kv_cache(c), {}, c.seq, cfg_.heads, cfg_.kv(), cfg_.padded_head_dim()});
    be.attention_forward({attention_dims(c), qkv, ctx,
                          c.arena.view(lse_, Shape{c.batch, cfg_.heads, c.seq}),
                          c.attention_prune()});
    return;
  }
  // Decode: one row per sequence, each at its own position (the rotation's table row), whose k
  // and v the attention appends (turned) before it attends.
  DecodeAttention d{qkv,        kv_cache(c), c.key_lengths,          ctx,
                    cfg_.heads, cfg_.kv(),   cfg_.padded_head_dim(), attention_dims(c).scale};
  d.start = c.positions_device;
  if (rotary) d.rope = rope(c, qkv);
  be.decode_attention(d);
}

Tensor Block::output(const StepContext& c) const {
  return c.act(out_act_, cfg_.padded_hidden());
}

AttentionDims Block::attention_dims(const StepContext& c) const {
  AttentionDims d;
  d.batch = c.batch;
  d.seq = c.seq;
  d.heads = cfg_.heads;
  d.head_dim = cfg_.padded_head_dim();  // as stored; its padding columns are zero
  d.kv_heads = cfg_.kv();
  d.causal = cfg_.causal;
  d.key_lengths = c.key_lengths;
  d.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(cfg_.head_dim())));
  d.drop = c.dropout(cfg_.attn_dropout, site(0));
  return d;
}

Rope Block::rope(const StepContext& c, Tensor qkv) const {
  return Rope{qkv,
              c.rope_cos,
              c.rope_sin,
              c.seq,
              cfg_.heads,
              cfg_.kv(),
              cfg_.padded_head_dim(),
              cfg_.rotary_dim()};
}

HeadNormShape Block::qk_norm_shape() const {
  return {cfg_.heads, cfg_.kv(), cfg_.padded_head_dim(), cfg_.head_dim(),
          static_cast<float>(cfg_.ln_eps)};
}

Tensor Block::qk_in(const StepContext& c) const {
  return c.act(qk_in_, qk_norm_shape().normed() * cfg_.padded_head_dim());
}

Tensor Block::qk_rstd(const StepContext& c) const {
  return c.arena.view(qk_rstd_, Shape{c.rows(), qk_norm_shape().normed()});
}

Tensor Block::attention_input(const StepContext& c, Tensor x) const {
  if (cfg_.norm != NormPlacement::Pre) return x;
  const Tensor y = c.act(ln1_out_, cfg_.padded_hidden());
  norm_forward(c, ln1_, ln1_mean_, ln1_rstd_, x, y);
  return y;
}

Tensor Block::self_attention(const StepContext& c, Tensor attn_in) const {
  const Tensor qkv = c.act(qkv_act_, cfg_.padded_qkv()), ctx = c.act(ctx_, cfg_.padded_context());
  qkv_.forward(c, attn_in, qkv);
  c.prune_activation(PrunePoint::Qkv, qkv);
  qk_norm(c, qkv);
  attend(c, qkv, ctx);
  c.prune_activation(PrunePoint::AttnContext, ctx);
  return ctx;
}

void Block::qk_norm(const StepContext& c, Tensor qkv) const {
  if (!cfg_.qk_norm) return;
  c.backend.head_norm_forward(
      {qk_norm_shape(), qkv, q_norm_.gamma(c), k_norm_.gamma(c), qk_in(c), qk_rstd(c)});
}

Tensor Block::mlp_activation(const StepContext& c, Tensor ffn_in) const {
  const Tensor f_pre = c.act(f_pre_, fc1_.out()), f = c.act(f_, cfg_.padded_ffn());
  if (cfg_.gated()) {
    fc1_.forward(c, ffn_in, f_pre);
    gate(c);
  } else {
    fc1_.forward(c, ffn_in, f, cfg_.activation, f_pre);
  }
  c.prune_activation(PrunePoint::Fc1, f);
  return f;
}

void Block::gate(const StepContext& c) const {
  GluFwd g{c.act(f_pre_, fc1_.out()), c.act(f_, cfg_.padded_ffn()), cfg_.activation};
  if (const Fp8Copies made = down_x_copies(c); made.x.defined()) {
    g.fp8 = fp8_out(made.x, made.x_t, fc2_.dense()->fp8(c, c.rows()).x);
    g.y = {};
  }
  c.backend.glu_forward(g);
}

Fp8Copies Block::down_x_copies(const StepContext& c) const {
  const Linear* down = fc2_.dense();
  if (!cfg_.gated() || !down || c.pruning) return {};
  const Fp8Linear f = down->fp8(c, c.rows());
  if (!f.forward || !f.weight_grad) return {};
  const auto [x, x_t] = both_layouts(c.act(f_, cfg_.padded_ffn()), DType::F8E4M3);
  return {x, x_t, {}, {}};
}

Fp8Copies Block::up_dy_copies(const StepContext& c, Tensor d_pre) const {
  const Linear* up = fc1_.dense();
  if (!cfg_.gated() || !up || up->has_bias() || c.pruning) return {};
  const Fp8Linear f = up->fp8(c, c.rows());
  if (!f.input_grad || !f.weight_grad) return {};
  const auto [dy, dy_t] = both_layouts(d_pre, DType::F8E5M2);
  return {{}, {}, dy, dy_t};
}

void Block::norm_forward(const StepContext& c, const NormParams& ln, ActivationArena::Slot mean,
                         ActivationArena::Slot rstd, Tensor x, Tensor y) const {
  c.backend.layernorm_forward({x, ln.gamma(c), ln.beta(c), y, ln.mean(c, mean),
                               c.arena.view(rstd, Shape{c.rows()}), static_cast<float>(cfg_.ln_eps),
                               cfg_.hidden, cfg_.norm_kind});
}

// One sequence: its products are matrix-vector ones, which take the norm and the residual in
// for nothing; at more rows the forward's own residual-and-norm op is the cheaper way.
bool Block::decodes_fused(const StepContext& c) const {
  return c.kv == KvStep::Decode && c.rows() == 1 && cfg_.norm == NormPlacement::Pre && !c.pruning &&
         qkv_.dense() && out_.dense() && fc1_.dense() && fc2_.dense();
}

// x1 = x + attention(LN1(x)); out = x1 + MLP(LN2(x1)), or of LN2(x) with a parallel residual:
// forward()'s sums, the norms and residual adds inside the products' ops.
Tensor Block::decode_forward(const StepContext& c, Tensor x) const {
  const int64_t h = cfg_.padded_hidden();
  const float eps = static_cast<float>(cfg_.ln_eps);
  const std::string scope = fmt::format("layers.{}", index_);
  c.backend.set_scope(scope + ".attn", Phase::Forward);
  const Tensor qkv = c.act(qkv_act_, cfg_.padded_qkv()), ctx = c.act(ctx_, cfg_.padded_context());
  qkv_.dense()->forward_fused(c, ln1_.fused_product(c, x, qkv, eps, cfg_.hidden));
  qk_norm(c, qkv);
  attend(c, qkv, ctx);
  const Tensor x1 = c.act(x1_, h);
  FusedLinearFwd attn_out;
  attn_out.x = ctx;
  attn_out.y = x1;
  attn_out.residual = x;
  out_.dense()->forward_fused(c, attn_out);

  c.backend.set_scope(scope + ".mlp", Phase::Forward);
  const Tensor f = c.act(f_, cfg_.padded_ffn()), out = c.act(out_act_, h);
  FusedLinearFwd up = ln2_.fused_product(c, cfg_.parallel_residual ? x : x1, f, eps, cfg_.hidden);
  up.act = cfg_.activation;
  fc1_.dense()->forward_fused(c, up);
  FusedLinearFwd down;
  down.x = f;
  down.y = out;
  down.residual = x1;
  fc2_.dense()->forward_fused(c, down);
  return out;
}

Tensor Block::forward(const StepContext& c, Tensor x) const {
  if (decodes_fused(c)) return decode_forward(c, x);
  const int64_t h = cfg_.padded_hidden(), rows = c.rows();
  const bool pre = cfg_.norm == NormPlacement::Pre;
  const float eps = static_cast<float>(cfg_.ln_eps);
  Backend& be = c.backend;
  const std::string scope = fmt::format("layers.{}", index_);
  const Phase phase = c.recompute ? Phase::Backward : Phase::Forward;
  be.set_scope(scope + ".attn", phase);

  // Attention sublayer input: LN1(x) for pre-LN, x itself for post-LN.
  const Tensor tmp = c.act(scratch_, h);
  out_.forward(c, self_attention(c, attention_input(c, x)), tmp);
  c.prune_activation(PrunePoint::AttnOut, tmp);

  // Residual 1. Pre-LN: x1 = x + drop(a), ffn_in = LN2(x1). Post-LN: x1 = LN1(x + drop(a)).
  // Parallel: x1 = x + drop(a), ffn_in = LN2(x).
  const Tensor x1 = c.act(x1_, h), s1 = c.act(sum1_, h);
  const bool parallel = cfg_.parallel_residual;
  ResidualFwd r1;
  r1.x = tmp;
  r1.residual = x;
  r1.drop = c.dropout(cfg_.dropout, site(1));
  r1.eps = eps;
  r1.width = cfg_.hidden;
  r1.kind = cfg_.norm_kind;
  const NormParams& ln_after_attn = pre ? ln2_ : ln1_;
  if (!parallel) {
    r1.gamma = ln_after_attn.gamma(c);
    r1.beta = ln_after_attn.beta(c);
    r1.mean = ln_after_attn.mean(c, pre ? ln2_mean_ : ln1_mean_);
    r1.rstd = c.arena.view(pre ? ln2_rstd_ : ln1_rstd_, Shape{rows});
    r1.y = pre ? s1 : x1;
  }
  r1.sum = pre ? x1 : s1;
  be.residual_forward(r1);
  if (parallel) norm_forward(c, ln2_, ln2_mean_, ln2_rstd_, x, s1);

  be.set_scope(scope + ".mlp", phase);
  const Tensor f = mlp_activation(c, pre ? s1 : x1);
  if (const Fp8Copies made = down_x_copies(c); made.x.defined())
    fc2_.dense()->forward(c, f, tmp, Activation::None, {}, made);
  else
    fc2_.forward(c, f, tmp);
  c.prune_activation(PrunePoint::Fc2, tmp);

  // Residual 2. Pre-LN: out = x1 + drop(m). Post-LN: out = LN2(x1 + drop(m)).
  const Tensor out = c.act(out_act_, h);
  ResidualFwd r2;
  r2.x = tmp;
  r2.residual = x1;
  r2.drop = c.dropout(cfg_.dropout, site(2));
  r2.eps = eps;
  r2.width = cfg_.hidden;
  r2.kind = cfg_.norm_kind;
  if (pre) {
    r2.sum = out;
  } else {
    r2.sum = c.act(sum2_, h);
    r2.gamma = ln2_.gamma(c);
    r2.beta = ln2_.beta(c);
    r2.y = out;
    r2.mean = ln2_.mean(c, ln2_mean_);
    r2.rstd = c.arena.view(ln2_rstd_, Shape{rows});
  }
  be.residual_forward(r2);
  return out;
}

void Block::recompute(const StepContext& c, Tensor x, Recompute mode) const {
  if (mode == Recompute::None) return;
  if (mode == Recompute::Full) {
    forward(c, x);
    return;
  }
  const int64_t h = cfg_.padded_hidden();
  const std::string scope = fmt::format("layers.{}", index_);
  c.backend.set_scope(scope + ".attn", Phase::Backward);
  const Tensor attn_in = attention_input(c, x);
  if (mode == Recompute::Attention) self_attention(c, attn_in);
  // The norm after attention, from the input it keeps: LN2 of x1 (of x when parallel) pre-LN,
  // LN1 of the sum post-LN. The fused residual op normalises its stored sum the same way.
  const Tensor x1 = c.act(x1_, h), s1 = c.act(sum1_, h);
  const bool pre = cfg_.norm == NormPlacement::Pre;
  if (pre)
    norm_forward(c, ln2_, ln2_mean_, ln2_rstd_, cfg_.parallel_residual ? x : x1, s1);
  else
    norm_forward(c, ln1_, ln1_mean_, ln1_rstd_, s1, x1);
  c.backend.set_scope(scope + ".mlp", Phase::Backward);
  // A gated MLP keeps its first projection's output; an ungated one's activation is that GEMM's
  // epilogue, so the GEMM runs again.
  if (cfg_.gated())
    gate(c);
  else
    mlp_activation(c, pre ? s1 : x1);
}

void Block::backward(const StepContext& c, Tensor x, Tensor dres, const BlockScratch& s) const {
  const int64_t h = cfg_.padded_hidden(), ctx_width = cfg_.padded_context(), rows = c.rows();
  const bool pre = cfg_.norm == NormPlacement::Pre;
  Backend& be = c.backend;
  const std::string scope = fmt::format("layers.{}", index_);
  const Tensor da = c.act(s.a, h), db = c.act(s.b, h), df = c.act(s.ffn, cfg_.padded_ffn());
  const Tensor dqkv = c.act(s.qkv, cfg_.padded_qkv()), dctx = c.act(s.b, ctx_width);
  const Tensor x1 = c.act(x1_, h), s1 = c.act(sum1_, h);
  const Tensor ffn_in = pre ? s1 : x1;
  auto rstd = [&](ActivationArena::Slot slot) { return c.arena.view(slot, Shape{rows}); };

  be.set_scope(scope + ".mlp", Phase::Backward);
  // Residual 2: dres <- gradient into x1 through the skip path (post-LN: through LN2 too).
  ResidualBwd r2;
  r2.width = cfg_.hidden;
  r2.kind = cfg_.norm_kind;
  r2.drop = c.dropout(cfg_.dropout, site(2));
  r2.d_x = da;
  r2.d_residual = dres;
  if (pre) {
    r2.d_sum = dres;
  } else {
    r2.d_y = dres;
    r2.sum = c.act(sum2_, h);
    r2.gamma = ln2_.gamma(c);
    r2.mean = ln2_.mean(c, ln2_mean_);
    r2.rstd = rstd(ln2_rstd_);
    r2.d_gamma = ln2_.dgamma(c);
    r2.d_beta = ln2_.dbeta(c);
  }
  be.residual_backward(r2);
  const Tensor f = c.act(f_, cfg_.padded_ffn());
  if (const Fp8Copies made = down_x_copies(c); made.x_t.defined())
    fc2_.dense()->backward(c, f, da, df, false, Activation::None, {}, made);
  else
    fc2_.backward(c, f, da, df);
  c.prune_activation_grad(PrunePoint::Fc2Grad, df);
  // Pre-LN: the FFN input is LN2(x1), so its gradient goes through LN2 below; post-LN: the
  // FFN input is x1 itself, so add it to the skip gradient now (and prune that sum).
  const Tensor f_pre = c.act(f_pre_, fc1_.out()), d_ffn_in = pre ? db : dres;
  if (cfg_.gated()) {
    const Tensor d_pre = c.act(s.gate, fc1_.out());
    GluBwd g{f_pre, df, d_pre, cfg_.activation};
    const Fp8Copies made = up_dy_copies(c, d_pre);
    if (made.dy.defined()) {
      g.fp8 = fp8_out(made.dy, made.dy_t, fc1_.dense()->fp8(c, rows).dy);
      g.d_pre = {};
      be.glu_backward(g);
      fc1_.dense()->backward(c, ffn_in, d_pre, d_ffn_in, !pre, Activation::None, {}, made);
    } else {
      be.glu_backward(g);
      fc1_.backward(c, ffn_in, d_pre, d_ffn_in, !pre);
    }
  } else {
    fc1_.backward(c, ffn_in, df, d_ffn_in, !pre, cfg_.activation, f_pre);
  }
  c.prune_activation_grad(PrunePoint::Fc1Grad, pre ? db : dres);

  be.set_scope(scope + ".attn", Phase::Backward);
  ResidualBwd r1;
  r1.width = cfg_.hidden;
  r1.kind = cfg_.norm_kind;
  r1.drop = c.dropout(cfg_.dropout, site(1));
  r1.d_x = da;
  r1.d_residual = dres;
  const NormParams& ln_after_attn = pre ? ln2_ : ln1_;
  if (cfg_.parallel_residual) {
    // x1 = x + drop(a) has no norm; LN2 read x itself, so its gradient joins x's.
    r1.d_sum = dres;
    be.residual_backward(r1);
    input_norm_backward(c, ln2_, ln2_mean_, ln2_rstd_, x, db, dres);
  } else {
    r1.gamma = ln_after_attn.gamma(c);
    r1.mean = ln_after_attn.mean(c, pre ? ln2_mean_ : ln1_mean_);
    r1.rstd = rstd(pre ? ln2_rstd_ : ln1_rstd_);
    r1.d_gamma = ln_after_attn.dgamma(c);
    r1.d_beta = ln_after_attn.dbeta(c);
    r1.d_y = pre ? db : dres;
    r1.sum = pre ? x1 : s1;
    if (pre) r1.d_sum = dres;
    be.residual_backward(r1);
  }

  const Tensor ctx = c.act(ctx_, ctx_width), qkv = c.act(qkv_act_, cfg_.padded_qkv());
  out_.backward(c, ctx, da, dctx);
  c.prune_activation_grad(PrunePoint::AttnOutGrad, dctx);
  // Under rotary positions the gradient of the rotated q and k comes out turned back: that of
  // the projection's output.
  be.attention_backward({attention_dims(c), qkv, ctx, dctx,
                         c.arena.view(lse_, Shape{c.batch, cfg_.heads, c.seq}), dqkv,
                         cfg_.position == Position::Rope ? rope(c, dqkv) : Rope{}});
  if (cfg_.qk_norm)
    be.head_norm_backward({qk_norm_shape(), dqkv, qk_in(c), qk_rstd(c), q_norm_.gamma(c),
                           k_norm_.gamma(c), q_norm_.dgamma(c), k_norm_.dgamma(c)});
  if (!pre) {
    qkv_.backward(c, x, dqkv, dres, true);
    c.prune_activation_grad(PrunePoint::QkvGrad, dres);
    return;
  }
  const Tensor ln1_out = c.act(ln1_out_, h);
  qkv_.backward(c, ln1_out, dqkv, da);
  c.prune_activation_grad(PrunePoint::QkvGrad, da);
  input_norm_backward(c, ln1_, ln1_mean_, ln1_rstd_, x, da, dres);
}

void Block::input_norm_backward(const StepContext& c, const NormParams& ln,
                                ActivationArena::Slot mean, ActivationArena::Slot rstd, Tensor x,
                                Tensor dy, Tensor dres) const {
  LayerNormBwd l = ln.backward_args(c, mean, rstd, x, dy, dres, cfg_.hidden);
  l.accumulate_dx = true;
  c.backend.layernorm_backward(l);
}

}  // namespace hwt
