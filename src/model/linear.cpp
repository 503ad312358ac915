#include "model/linear.h"

namespace hwt {

Linear::Linear(ParamStore& ps, const std::string& name, int64_t in, int64_t out, bool bias,
               float std, DimPad pad_out, DimPad pad_in)
    : w_(ps.add(name + ".weight", Shape{out, in}, true, Init::Normal, std, pad_out, pad_in)),
      has_bias_(bias),
      in_(in),
      out_(out) {
  ps.mark_linear_weight(w_);
  if (bias) b_ = ps.add(name + ".bias", Shape{out}, false, Init::Zeros, 0.0f, pad_out);
}

Linear Linear::tied(ParamStore::Handle weight, int64_t in, int64_t out) {
  Linear l;
  l.w_ = weight;
  l.in_ = in;
  l.out_ = out;
  return l;
}

Fp8Linear Linear::fp8(const StepContext& c, int64_t rows) const {
  return c.fp8 ? c.fp8->find(w_, rows, c.recompute) : Fp8Linear{};
}

void Linear::forward(const StepContext& c, Tensor x, Tensor y, Activation act, Tensor pre_act,
                     const Fp8Copies& made) const {
  LinearFwd a;
  a.x = x;
  a.w = c.params.compute(w_);
  if (has_bias_) a.b = c.params.compute(b_);
  a.y = y;
  a.act = act;
  a.pre_act = pre_act;
  a.fp8 = fp8(c, x.rows());
  a.fp8.made = made;
  c.backend.linear_forward(a);
}

void Linear::forward_fused(const StepContext& c, FusedLinearFwd a) const {
  a.w = c.params.compute(w_);
  if (has_bias_) a.b = c.params.compute(b_);
  c.backend.fused_linear_forward(a);
}

void Linear::backward(const StepContext& c, Tensor x, Tensor dy, Tensor dx, bool accumulate_dx,
                      Activation act, Tensor pre_act, const Fp8Copies& made) const {
  LinearBwd a;
  a.x = x;
  a.w = c.params.compute(w_);
  a.dy = dy;
  a.pre_act = pre_act;
  a.act = act;
  a.dx = dx;
  a.dw = c.params.grad(w_);
  if (has_bias_) a.db = c.params.grad(b_);
  a.accumulate_dx = accumulate_dx;
  a.fp8 = fp8(c, x.rows());
  a.fp8.made = made;
  c.backend.linear_backward(a);
}

NormParams::NormParams(ParamStore& ps, const std::string& name, int64_t dim, int64_t pad,
                       NormKind norm_kind)
    : kind(norm_kind),
      gamma_(ps.add(name + ".weight", Shape{dim}, false, Init::Ones, 0.0f, DimPad{pad})) {
  if (kind == NormKind::LayerNorm)
    beta_ = ps.add(name + ".bias", Shape{dim}, false, Init::Zeros, 0.0f, DimPad{pad});
}

Tensor NormParams::beta(const StepContext& c) const {
  return kind == NormKind::LayerNorm ? c.params.compute(beta_) : Tensor{};
}

Tensor NormParams::dbeta(const StepContext& c) const {
  return kind == NormKind::LayerNorm ? c.params.grad(beta_) : Tensor{};
}

FusedLinearFwd NormParams::fused_product(const StepContext& c, Tensor x, Tensor y, float eps,
                                         int64_t width) const {
  FusedLinearFwd a;
  a.x = x;
  a.y = y;
  a.gamma = gamma(c);
  a.beta = beta(c);
  a.eps = eps;
  a.width = width;
  a.kind = kind;
  return a;
}

Tensor NormParams::mean(const StepContext& c, ActivationArena::Slot slot) const {
  return kind == NormKind::LayerNorm ? c.arena.view(slot, Shape{c.rows()}) : Tensor{};
}

LayerNormBwd NormParams::backward_args(const StepContext& c, ActivationArena::Slot mean_slot,
                                       ActivationArena::Slot rstd_slot, Tensor x, Tensor dy,
                                       Tensor dx, int64_t width) const {
  LayerNormBwd l;
  l.x = x;
  l.gamma = gamma(c);
  l.mean = mean(c, mean_slot);
  l.rstd = c.arena.view(rstd_slot, Shape{c.rows()});
  l.dy = dy;
  l.dx = dx;
  l.dgamma = dgamma(c);
  l.dbeta = dbeta(c);
  l.width = width;
  l.kind = kind;
  return l;
}

}  // namespace hwt
