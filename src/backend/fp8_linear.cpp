#include "backend/fp8_linear.h"

#include <algorithm>

#include "backend/backend.h"
#include "core/error.h"

namespace hwt {
namespace {

struct Dims {
  int64_t m, n, k;
};

// fp8 GEMMs need every dimension a multiple of 16 (analysis/fp8_choice.h chooses only such).
Dims dims(const Tensor& x, const Tensor& w) {
  const Dims d{x.rows(), w.dim(0), x.cols()};
  HWT_CHECK(d.m % 16 == 0 && d.n % 16 == 0 && d.k % 16 == 0,
            "fp8 linear of x{} and w{}: every dimension must be a multiple of 16", x.shape.str(),
            w.shape.str());
  return d;
}

// A [rows, cols] fp8 copy at `offset` bytes into the workspace.
Tensor copy_at(const Fp8Linear& f, int64_t offset, DType dt, int64_t rows, int64_t cols) {
  return fp8_copy_in(f.workspace, offset, dt, rows, cols);
}

Tensor as_matrix(const Tensor& t) {
  return t.view(Shape{t.rows(), t.cols()});
}

// The cast of `src` into `out` with s's scale, keeping s's figures when `first`.
Fp8Cast cast(const Tensor& src, const Tensor& out, const Fp8Scaled& s, bool first, bool transpose) {
  return {as_matrix(src), out, s.scale, first ? s.amax : Tensor{}, first ? s.counts : Tensor{},
          transpose};
}

Matmul fp8_product(Tensor a, Tensor b, Tensor c, const Tensor& a_scale_inv,
                   const Tensor& b_scale_inv) {
  Matmul m;
  m.a = a;
  m.b = b;
  m.c = c;
  m.trans_b = true;
  m.a_scale_inv = a_scale_inv;
  m.b_scale_inv = b_scale_inv;
  return m;
}

// A copy the producer made, checked against the shape and format the product reads.
Tensor made_copy(const Tensor& t, DType dt, int64_t rows, int64_t cols) {
  HWT_CHECK(t.dtype == dt && t.rows() == rows && t.cols() == cols,
            "fp8 linear: a producer's copy {} must be {}[{}, {}]", t.str(), dtype_name(dt), rows,
            cols);
  return t.view(Shape{rows, cols});
}

// A product's two copies: a [a_rows, a_cols] (E4M3 or E5M2) at the start of the workspace, then
// b [b_rows, b_cols] (E4M3: x or w), or the producer's copies where it made them.
struct Copies {
  Tensor a, b;
};
Copies copies(const Fp8Linear& f, DType a_dt, int64_t a_rows, int64_t a_cols, int64_t b_rows,
              int64_t b_cols, const Tensor& a_made = {}, const Tensor& b_made = {}) {
  return {a_made.defined() ? made_copy(a_made, a_dt, a_rows, a_cols)
                           : copy_at(f, 0, a_dt, a_rows, a_cols),
          b_made.defined() ? made_copy(b_made, DType::F8E4M3, b_rows, b_cols)
                           : copy_at(f, a_rows * a_cols, DType::F8E4M3, b_rows, b_cols)};
}

Copies forward_copies(const LinearFwd& a) {  // x, w
  const Dims d = dims(a.x, a.w);
  return copies(a.fp8, DType::F8E4M3, d.m, d.k, d.n, d.k, a.fp8.made.x);
}

Copies input_grad_copies(const LinearBwd& a) {  // dy, wᵀ
  const Dims d = dims(a.x, a.w);
  return copies(a.fp8, DType::F8E5M2, d.m, d.n, d.k, d.n, a.fp8.made.dy);
}

Copies weight_grad_copies(const LinearBwd& a) {  // dyᵀ, xᵀ
  const Dims d = dims(a.x, a.w);
  return copies(a.fp8, DType::F8E5M2, d.n, d.m, d.k, d.m, a.fp8.made.dy_t, a.fp8.made.x_t);
}

// Whether the backward's input-grad product cast dy before the weight-grad product does.
bool input_grad_cast_dy(const LinearBwd& a) {
  return a.fp8.input_grad && a.dx.defined() && !a.fp8.made.dy.defined();
}

// Whether dy's figures were kept before the weight-grad product: by that cast or the producer.
bool dy_tallied_before_weight_grad(const LinearBwd& a) {
  return input_grad_cast_dy(a) || a.fp8.made.dy.defined();
}

}  // namespace

size_t fp8_linear_workspace_bytes(int64_t m, int64_t n, int64_t k) {
  return static_cast<size_t>(std::max({m * k + n * k, m * n + k * n, n * m + k * m}));
}

void cast_forward_operands(Backend& be, const LinearFwd& a) {
  if (!a.fp8.forward) return;
  const Copies c = forward_copies(a);
  if (!a.fp8.made.x.defined()) be.fp8_cast(cast(a.x, c.a, a.fp8.x, true, false));
  be.fp8_cast(cast(a.w, c.b, a.fp8.w, true, false));
}

void cast_input_grad_operands(Backend& be, const LinearBwd& a) {
  if (!a.fp8.input_grad || !a.dx.defined()) return;
  const Copies c = input_grad_copies(a);
  if (input_grad_cast_dy(a)) be.fp8_cast(cast(a.dy, c.a, a.fp8.dy, true, false));
  be.fp8_cast(cast(a.w, c.b, a.fp8.w, !a.fp8.forward, true));
}

void cast_weight_grad_operands(Backend& be, const LinearBwd& a) {
  if (!a.fp8.weight_grad) return;
  const Copies c = weight_grad_copies(a);
  if (!a.fp8.made.dy_t.defined())
    be.fp8_cast(cast(a.dy, c.a, a.fp8.dy, !dy_tallied_before_weight_grad(a), true));
  if (!a.fp8.made.x_t.defined()) be.fp8_cast(cast(a.x, c.b, a.fp8.x, !a.fp8.forward, true));
}

Matmul fp8_forward_product(const LinearFwd& a) {
  const Copies c = forward_copies(a);
  Matmul m = fp8_product(c.a, c.b, as_matrix(a.y), a.fp8.x.scale_inv, a.fp8.w.scale_inv);
  m.bias = a.b;
  m.act = a.act;
  if (a.act != Activation::None) m.pre_act = as_matrix(a.pre_act);
  return m;
}

Matmul fp8_input_grad_product(const LinearBwd& a) {
  const Copies c = input_grad_copies(a);
  Matmul m = fp8_product(c.a, c.b, as_matrix(a.dx), a.fp8.dy.scale_inv, a.fp8.w.scale_inv);
  m.beta = a.accumulate_dx ? 1.0f : 0.0f;
  return m;
}

Matmul fp8_weight_grad_product(const LinearBwd& a) {
  const Copies c = weight_grad_copies(a);
  Matmul m = fp8_product(c.a, c.b, a.dw.view(Shape{a.w.dim(0), a.w.cols()}), a.fp8.dy.scale_inv,
                         a.fp8.x.scale_inv);
  m.beta = 1.0f;
  return m;
}

Tensor fp8_copy_in(const Tensor& storage, int64_t offset, DType dt, int64_t rows, int64_t cols) {
  HWT_CHECK(static_cast<size_t>(offset + rows * cols) <= storage.bytes(),
            "{} too small for {} bytes of fp8 copies", storage.str(), offset + rows * cols);
  Tensor t = storage;
  if (t.data) t.data = static_cast<uint8_t*>(t.data) + offset;
  t.dtype = dt;
  t.shape = Shape{rows, cols};
  return t;
}

int64_t fp8_scale_inv_stride(const Fp8ScaleUpdate& a) {
  const int64_t tensors = a.amax.numel();
  const Tensor& s = a.scale_inv;
  if (s.shape.rank == 1) return s.numel() == tensors ? 1 : 0;
  return s.shape.rank == 2 && s.rows() == tensors ? s.cols() : 0;
}

void check_fp8_out(const Fp8Out& o, int64_t rows, int64_t cols, const char* op) {
  HWT_CHECK(o.active(), "{}: no fp8 copy to write", op);
  const Tensor& any = o.out.defined() ? o.out : o.out_t;
  HWT_CHECK(
      is_fp8(any.dtype) && (!o.out.defined() || !o.out_t.defined() || o.out.dtype == o.out_t.dtype),
      "{}: fp8 copies {} and {} must share one fp8 format", op, o.out.str(), o.out_t.str());
  HWT_CHECK(!o.out.defined() || (o.out.rows() == rows && o.out.cols() == cols),
            "{}: fp8 copy {} must be [{}, {}]", op, o.out.str(), rows, cols);
  HWT_CHECK(!o.out_t.defined() || (o.out_t.rows() == cols && o.out_t.cols() == rows),
            "{}: transposed fp8 copy {} must be [{}, {}]", op, o.out_t.str(), cols, rows);
  HWT_CHECK(
      o.scale.dtype == DType::F32 && o.scale.numel() == 1 && o.amax.defined() == o.counts.defined(),
      "{}: fp8 scale {}, amax {}, counts {}", op, o.scale.str(), o.amax.str(), o.counts.str());
}

void cast_fp8_out(Backend& be, const Tensor& values, const Fp8Out& o) {
  const Tensor v = as_matrix(values);
  if (o.out.defined()) be.fp8_cast({v, o.out, o.scale, o.amax, o.counts, false});
  if (o.out_t.defined()) {
    const bool first = !o.out.defined();
    be.fp8_cast(
        {v, o.out_t, o.scale, first ? o.amax : Tensor{}, first ? o.counts : Tensor{}, true});
  }
}

}  // namespace hwt
