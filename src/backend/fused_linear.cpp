#include "backend/fused_linear.h"

#include "core/error.h"
#include "core/integer_math.h"

namespace hwt {
namespace {

// The stages' tensors, carved one after another from a scratch base (null: only counted).
struct Stages {
  Tensor normed, mean, rstd, pre, g;
  size_t bytes = 0;
};

Stages carve(const FusedLinearFwd& a, Device device, char* base) {
  Stages s;
  auto take = [&](DType dt, Shape shape) {
    Tensor t{base ? base + s.bytes : nullptr, shape, dt, device};
    s.bytes += round_up(t.bytes(), size_t{256});
    return t;
  };
  const int64_t rows = a.x.rows();
  s.normed = a.x;
  if (a.gamma.defined()) {
    s.normed = take(a.x.dtype, a.x.shape);
    if (a.kind == NormKind::LayerNorm) s.mean = take(DType::F32, Shape{rows});
    s.rstd = take(DType::F32, Shape{rows});
  }
  if (a.act != Activation::None) s.pre = take(a.y.dtype, Shape{rows, a.w.dim(0)});
  s.g = a.residual.defined() ? take(a.y.dtype, a.y.shape) : a.y;
  return s;
}

}  // namespace

size_t fused_linear_scratch_bytes(const FusedLinearFwd& a, Device device) {
  HWT_CHECK(a.x.shape.rank == 2 && a.w.shape.rank == 2 && a.y.shape.rank == 2,
            "fused linear x {} w {} y {} must be matrices", a.x.str(), a.w.str(), a.y.str());
  const int64_t n = a.y.cols(), k = a.x.cols();
  const bool gated = is_gated(a.act);
  HWT_CHECK(a.w.cols() == k && a.w.rows() == (gated ? 2 * n : n) && a.y.rows() == a.x.rows(),
            "fused linear x {} w {} y {} ({})", a.x.str(), a.w.str(), a.y.str(),
            gated ? "gated: w has 2 rows per column of y" : "w has a row per column of y");
  HWT_CHECK(!a.b.defined() || a.b.numel() == a.w.rows(), "fused linear bias {} for w {}", a.b.str(),
            a.w.str());
  HWT_CHECK(
      !a.gamma.defined() || (a.gamma.numel() == k && (!a.beta.defined() || a.beta.numel() == k)),
      "fused linear norm gamma {} beta {} for rows of {}", a.gamma.str(), a.beta.str(), k);
  HWT_CHECK(!a.residual.defined() || a.residual.shape == a.y.shape,
            "fused linear residual {} for y {}", a.residual.str(), a.y.str());
  HWT_CHECK(!a.residual.defined() || a.residual.data != a.y.data,
            "fused linear residual must not alias y");
  return carve(a, device, nullptr).bytes;
}

void compose_fused_linear(Backend& be, const FusedLinearFwd& a, void* scratch) {
  const Stages s = carve(a, be.device(), static_cast<char*>(scratch));
  if (a.gamma.defined())
    be.layernorm_forward({a.x, a.gamma, a.beta, s.normed, s.mean, s.rstd, a.eps, a.width, a.kind});
  if (is_gated(a.act)) {
    be.linear_forward({s.normed, a.w, a.b, s.pre, Activation::None, {}});
    be.glu_forward({s.pre, s.g, a.act});
  } else {
    be.linear_forward({s.normed, a.w, a.b, s.g, a.act, s.pre});
  }
  if (a.residual.defined()) {
    ResidualFwd r;
    r.x = s.g;
    r.residual = a.residual;
    r.sum = a.y;
    be.residual_forward(r);
  }
}

}  // namespace hwt
