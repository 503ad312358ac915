// Vectorised element-wise math (vector_math.h). Highway compiles this file once per x86 target
// (foreach_target.h re-includes it) and picks the best at run time.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backend/cpu/vector_math.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
// (foreach_target.h must come first)
#include <hwy/contrib/math/math-inl.h>
#include <hwy/highway.h>

#include "backend/cpu/vector_math.h"

HWY_BEFORE_NAMESPACE();
namespace hwt::vec {
namespace HWY_NAMESPACE {

namespace hn = hwy::HWY_NAMESPACE;
using D = hn::ScalableTag<float>;
using V = hn::Vec<D>;

// erfc(z) after Press et al., Numerical Recipes (2nd ed., §6.2, erfcc): relative error below
// 1.2e-7 for every z, so Φ(x) = erfc(-x/√2)/2 keeps its relative accuracy in the far left tail,
// where 1 + erf(x/√2) cancels to zero.
HWY_INLINE V Erfc(D d, V z) {
  const V az = hn::Abs(z);
  const V t = hn::Div(hn::Set(d, 1.0f), hn::MulAdd(hn::Set(d, 0.5f), az, hn::Set(d, 1.0f)));
  V p = hn::Set(d, 0.17087277f);
  for (const float c : {-0.82215223f, 1.48851587f, -1.13520398f, 0.27886807f, -0.18628806f,
                        0.09678418f, 0.37409196f, 1.00002368f, -1.26551223f})
    p = hn::MulAdd(p, t, hn::Set(d, c));
  const V r = hn::Mul(t, hn::Exp(d, hn::Sub(p, hn::Mul(az, az))));
  return hn::IfThenElse(hn::Lt(z, hn::Zero(d)), hn::Sub(hn::Set(d, 2.0f), r), r);
}

HWY_INLINE V NormalCdf(D d, V x) {
  return hn::Mul(hn::Set(d, 0.5f), Erfc(d, hn::Mul(x, hn::Set(d, -0.70710678118654752f))));
}

// The logistic function; e^-x is taken at most at 88 (e^88 is finite in float, Highway's Exp
// is defined up to 104), where σ is already below 1e-38.
HWY_INLINE V Sigmoid(D d, V x) {
  const V e = hn::Exp(d, hn::Min(hn::Neg(x), hn::Set(d, 88.0f)));
  return hn::Div(hn::Set(d, 1.0f), hn::Add(hn::Set(d, 1.0f), e));
}

// GPT-2's tanh GELU: u = √(2/π)(x + 0.044715x³).
HWY_INLINE V GeluTanhArg(D d, V x) {
  const V x3 = hn::Mul(hn::Mul(x, x), x);
  return hn::Mul(hn::Set(d, 0.79788456080286536f), hn::MulAdd(hn::Set(d, 0.044715f), x3, x));
}

// act(x) and act'(x), matching activate() and activate_grad() in core/activation_math.h.
HWY_INLINE V Act(Activation act, D d, V x) {
  switch (act) {
    case Activation::Gelu:
      return hn::Mul(x, NormalCdf(d, x));
    case Activation::GeluTanh:
    case Activation::GeGlu: {
      const V t = hn::Tanh(d, GeluTanhArg(d, x));
      return hn::Mul(hn::Mul(hn::Set(d, 0.5f), x), hn::Add(hn::Set(d, 1.0f), t));
    }
    case Activation::SwiGlu:
      return hn::Mul(x, Sigmoid(d, x));
    case Activation::Relu:
      return hn::Max(x, hn::Zero(d));
    case Activation::None:
      return x;
  }
  return x;
}

HWY_INLINE V ActGrad(Activation act, D d, V x) {
  const V one = hn::Set(d, 1.0f), half = hn::Set(d, 0.5f);
  switch (act) {
    case Activation::Gelu: {
      // Φ(x) + x φ(x)
      const V pdf = hn::Mul(hn::Set(d, 0.39894228040143268f),
                            hn::Exp(d, hn::Mul(hn::Set(d, -0.5f), hn::Mul(x, x))));
      return hn::MulAdd(x, pdf, NormalCdf(d, x));
    }
    case Activation::GeluTanh:
    case Activation::GeGlu: {
      const V t = hn::Tanh(d, GeluTanhArg(d, x));
      const V du = hn::Mul(hn::Set(d, 0.79788456080286536f),
                           hn::MulAdd(hn::Set(d, 3.0f * 0.044715f), hn::Mul(x, x), one));
      const V dt = hn::Mul(hn::NegMulAdd(t, t, one), du);  // (1 - t²) du
      return hn::Mul(half, hn::MulAdd(x, dt, hn::Add(one, t)));
    }
    case Activation::SwiGlu: {
      const V s = Sigmoid(d, x);
      return hn::Mul(s, hn::MulAdd(x, hn::Sub(one, s), one));  // s (1 + x (1 - s))
    }
    case Activation::Relu:
      return hn::IfThenElseZero(hn::Gt(x, hn::Zero(d)), one);
    case Activation::None:
      return one;
  }
  return one;
}

// Calls body(i, inputs...) on full vectors; the tail goes through zero-padded copies, so every
// element is computed by the same vector code. `ins` are the input arrays, `outs` the outputs.
template <int kIn, int kOut, class Body>
HWY_INLINE void ForEachVector(int64_t n, const float* const (&ins)[kIn], float* const (&outs)[kOut],
                              Body body) {
  const D d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + N <= n; i += N) {
    V in[kIn], out[kOut];
    for (int k = 0; k < kIn; ++k) in[k] = hn::LoadU(d, ins[k] + i);
    body(in, out);
    for (int k = 0; k < kOut; ++k) hn::StoreU(out[k], d, outs[k] + i);
  }
  if (i == n) return;
  HWY_ALIGN float buf[HWY_MAX_BYTES / sizeof(float)];
  const size_t rest = static_cast<size_t>(n - i);
  V in[kIn], out[kOut];
  for (int k = 0; k < kIn; ++k) {
    hn::Store(hn::Zero(d), d, buf);
    for (size_t j = 0; j < rest; ++j) buf[j] = ins[k][i + static_cast<int64_t>(j)];
    in[k] = hn::Load(d, buf);
  }
  body(in, out);
  for (int k = 0; k < kOut; ++k) {
    hn::Store(out[k], d, buf);
    for (size_t j = 0; j < rest; ++j) outs[k][i + static_cast<int64_t>(j)] = buf[j];
  }
}

void ActivateN(Activation act, const float* x, float* y, int64_t n) {
  const D d;
  ForEachVector<1, 1>(n, {x}, {y}, [&](const V* in, V* out) { out[0] = Act(act, d, in[0]); });
}

void BiasActivateN(Activation act, const float* bias, float* z, float* y, int64_t n) {
  if (!bias) return ActivateN(act, z, y, n);
  const D d;
  ForEachVector<2, 2>(n, {z, bias}, {z, y}, [&](const V* in, V* out) {
    out[0] = hn::Add(in[0], in[1]);
    out[1] = Act(act, d, out[0]);
  });
}

void ScaleByActivationGradN(Activation act, const float* x, float* dy, int64_t n) {
  const D d;
  ForEachVector<2, 1>(n, {x, dy}, {dy}, [&](const V* in, V* out) {
    out[0] = hn::Mul(in[1], ActGrad(act, d, in[0]));
  });
}

void GluN(Activation act, const float* gate, const float* up, float* y, int64_t n) {
  const D d;
  ForEachVector<2, 1>(n, {gate, up}, {y},
                      [&](const V* in, V* out) { out[0] = hn::Mul(Act(act, d, in[0]), in[1]); });
}

void GluGradN(Activation act, const float* gate, const float* up, const float* dy, float* d_gate,
              float* d_up, int64_t n) {
  const D d;
  ForEachVector<3, 2>(n, {gate, up, dy}, {d_gate, d_up}, [&](const V* in, V* out) {
    out[0] = hn::Mul(hn::Mul(in[2], in[1]), ActGrad(act, d, in[0]));
    out[1] = hn::Mul(in[2], Act(act, d, in[0]));
  });
}

double SumSquaresN(const float* x, int64_t n) {
  const hn::ScalableTag<double> dd;
  const hn::Rebind<float, decltype(dd)> df;  // as many floats as dd has doubles
  const int64_t N = static_cast<int64_t>(hn::Lanes(dd));
  auto acc0 = hn::Zero(dd), acc1 = hn::Zero(dd);
  int64_t i = 0;
  for (; i + 2 * N <= n; i += 2 * N) {
    const auto a = hn::PromoteTo(dd, hn::LoadU(df, x + i));
    const auto b = hn::PromoteTo(dd, hn::LoadU(df, x + i + N));
    acc0 = hn::MulAdd(a, a, acc0);
    acc1 = hn::MulAdd(b, b, acc1);
  }
  double s = hn::GetLane(hn::SumOfLanes(dd, hn::Add(acc0, acc1)));
  for (; i < n; ++i) s += static_cast<double>(x[i]) * x[i];
  return s;
}

}  // namespace HWY_NAMESPACE
}  // namespace hwt::vec
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace hwt::vec {

HWY_EXPORT(ActivateN);
HWY_EXPORT(BiasActivateN);
HWY_EXPORT(ScaleByActivationGradN);
HWY_EXPORT(GluN);
HWY_EXPORT(GluGradN);
HWY_EXPORT(SumSquaresN);

void activate(Activation act, const float* x, float* y, int64_t n) {
  HWY_DYNAMIC_DISPATCH(ActivateN)(act, x, y, n);
}

void bias_activate(Activation act, const float* bias, float* z, float* y, int64_t n) {
  HWY_DYNAMIC_DISPATCH(BiasActivateN)(act, bias, z, y, n);
}

void scale_by_activation_grad(Activation act, const float* x, float* dy, int64_t n) {
  HWY_DYNAMIC_DISPATCH(ScaleByActivationGradN)(act, x, dy, n);
}

void glu(Activation act, const float* gate, const float* up, float* y, int64_t n) {
  HWY_DYNAMIC_DISPATCH(GluN)(act, gate, up, y, n);
}

void glu_grad(Activation act, const float* gate, const float* up, const float* dy, float* d_gate,
              float* d_up, int64_t n) {
  HWY_DYNAMIC_DISPATCH(GluGradN)(act, gate, up, dy, d_gate, d_up, n);
}

double sum_squares(const float* x, int64_t n) {
  return HWY_DYNAMIC_DISPATCH(SumSquaresN)(x, n);
}

int64_t compiled_targets() {
  return HWY_TARGETS;
}

}  // namespace hwt::vec
#endif  // HWY_ONCE
