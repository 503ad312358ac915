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

// A tensor of `shape` and `dt` at `offset` bytes into `storage`, which must hold it.
Tensor view_in(const Tensor& storage, int64_t offset, DType dt, Shape shape) {
  const auto end =
      static_cast<size_t>(offset) + static_cast<size_t>(shape.numel()) * dtype_size(dt);
  HWT_CHECK(end <= storage.bytes(), "{} too small for a view of {} bytes at {}", storage.str(),
            end - static_cast<size_t>(offset), offset);
  Tensor t = storage;
  if (t.data) t.data = static_cast<uint8_t*>(t.data) + offset;
  t.dtype = dt;
  t.shape = shape;
  return t;
}

// A [rows, cols] fp8 copy at `offset` bytes into the workspace.
Tensor copy_at(const Fp8Linear& f, int64_t offset, DType dt, int64_t rows, int64_t cols) {
  return fp8_copy_in(f.workspace, offset, dt, rows, cols);
}

Tensor as_matrix(const Tensor& t) {
  return t.view(Shape{t.rows(), t.cols()});
}

// The cast of `src` into copies `out` (as it is) and `out_t` (transposed), either undefined, with
// s's scale, keeping s's figures when `first`.
Fp8Cast cast(const Tensor& src, const Tensor& out, const Tensor& out_t, const Fp8Scaled& s,
             bool first) {
  return {as_matrix(src), fp8_out(out, out_t, first ? s : Fp8Scaled{s.scale, {}, {}, {}})};
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

// wᵀ as the forward's cast of w also writes it for the input-grad product, where both run in fp8
// and the layer has storage for it; undefined otherwise.
Tensor kept_w_t(const Fp8Linear& f, const Dims& d) {
  if (!f.forward || !f.input_grad || !f.w_t.defined()) return {};
  return fp8_copy_in(f.w_t, 0, DType::F8E4M3, d.k, d.n);
}

// Where each copy lands in the workspace: the forward's x [M,K] then w [N,K]; the backward's
// dy [M,N], dyᵀ [N,M], wᵀ [K,N] and xᵀ [K,M] one after another, so that dy is cast once into
// both its layouts and its producer may write them in place beforehand (fp8_dy_places).
struct Offsets {
  int64_t x = 0, w, dy = 0, dy_t, w_t, x_t;
  explicit Offsets(const Dims& d)
      : w(d.m * d.k), dy_t(d.m * d.n), w_t(2 * d.m * d.n), x_t(2 * d.m * d.n + d.k * d.n) {}
};

// A copy already made (by the producer, or wᵀ kept) or its place in the workspace.
Tensor copy(const Fp8Linear& f, const Tensor& made, int64_t offset, DType dt, int64_t rows,
            int64_t cols) {
  return made.defined() ? made_copy(made, dt, rows, cols) : copy_at(f, offset, dt, rows, cols);
}

// A product's two copies: a (x or dy, E4M3 or E5M2) and b (w or x, E4M3).
struct Copies {
  Tensor a, b;
};

Copies forward_copies(const LinearFwd& a) {  // x, w
  const Dims d = dims(a.x, a.w);
  const Offsets o(d);
  return {copy(a.fp8, a.fp8.made.x, o.x, DType::F8E4M3, d.m, d.k),
          copy(a.fp8, {}, o.w, DType::F8E4M3, d.n, d.k)};
}

Copies input_grad_copies(const LinearBwd& a) {  // dy, wᵀ
  const Dims d = dims(a.x, a.w);
  const Offsets o(d);
  return {copy(a.fp8, a.fp8.made.dy, o.dy, DType::F8E5M2, d.m, d.n),
          copy(a.fp8, kept_w_t(a.fp8, d), o.w_t, DType::F8E4M3, d.k, d.n)};
}

Copies weight_grad_copies(const LinearBwd& a) {  // dyᵀ, xᵀ
  const Dims d = dims(a.x, a.w);
  const Offsets o(d);
  return {copy(a.fp8, a.fp8.made.dy_t, o.dy_t, DType::F8E5M2, d.n, d.m),
          copy(a.fp8, a.fp8.made.x_t, o.x_t, DType::F8E4M3, d.k, d.m)};
}

// Whether the backward's input-grad product cast dy before the weight-grad product does.
bool input_grad_cast_dy(const LinearBwd& a) {
  return a.fp8.input_grad && a.dx.defined() && !a.fp8.made.dy.defined();
}

// Whether that cast also writes dyᵀ for the weight-grad product: one pass over dy for both.
bool dy_cast_once(const LinearBwd& a) {
  return input_grad_cast_dy(a) && a.fp8.weight_grad && !a.fp8.made.dy_t.defined();
}

// Whether dy's figures were kept before the weight-grad product: by that cast or the producer.
bool dy_tallied_before_weight_grad(const LinearBwd& a) {
  return input_grad_cast_dy(a) || a.fp8.made.dy.defined();
}

}  // namespace

size_t fp8_linear_workspace_bytes(int64_t m, int64_t n, int64_t k) {
  const Offsets o({m, n, k});
  return static_cast<size_t>(std::max(o.w + n * k, o.x_t + k * m));
}

Fp8DyPlaces fp8_dy_places(const Fp8Linear& f, int64_t m, int64_t n) {
  const Offsets o({m, n, 0});
  return {{{}, {}, copy_at(f, o.dy, DType::F8E5M2, m, n), copy_at(f, o.dy_t, DType::F8E5M2, n, m)},
          view_in(f.workspace, o.w_t, DType::F32, Shape{m})};
}

void cast_forward_operands(Backend& be, const LinearFwd& a) {
  if (!a.fp8.forward) return;
  const Copies c = forward_copies(a);
  if (!a.fp8.made.x.defined()) be.fp8_cast(cast(a.x, c.a, {}, a.fp8.x, true));
  be.fp8_cast(cast(a.w, c.b, kept_w_t(a.fp8, dims(a.x, a.w)), a.fp8.w, true));
}

void cast_input_grad_operands(Backend& be, const LinearBwd& a) {
  if (!a.fp8.input_grad || !a.dx.defined()) return;
  const Copies c = input_grad_copies(a);
  if (input_grad_cast_dy(a))
    be.fp8_cast(
        cast(a.dy, c.a, dy_cast_once(a) ? weight_grad_copies(a).a : Tensor{}, a.fp8.dy, true));
  if (!kept_w_t(a.fp8, dims(a.x, a.w)).defined())
    be.fp8_cast(cast(a.w, {}, c.b, a.fp8.w, !a.fp8.forward));
}

void cast_weight_grad_operands(Backend& be, const LinearBwd& a) {
  if (!a.fp8.weight_grad) return;
  const Copies c = weight_grad_copies(a);
  if (!a.fp8.made.dy_t.defined() && !dy_cast_once(a))
    be.fp8_cast(cast(a.dy, {}, c.a, a.fp8.dy, !dy_tallied_before_weight_grad(a)));
  if (!a.fp8.made.x_t.defined()) be.fp8_cast(cast(a.x, {}, c.b, a.fp8.x, !a.fp8.forward));
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
  return view_in(storage, offset, dt, Shape{rows, cols});
}

int64_t fp8_scale_inv_stride(const Fp8ScaleUpdate& a) {
  const int64_t tensors = a.amax.numel();
  const Tensor& s = a.scale_inv;
  if (s.shape.rank == 1) return s.numel() == tensors ? 1 : 0;
  return s.shape.rank == 2 && s.rows() == tensors ? s.cols() : 0;
}

Fp8Out fp8_out(const Tensor& out, const Tensor& out_t, const Fp8Scaled& s) {
  return {out, out_t, s.scale, s.amax, s.counts};
}

void check_fp8_out(const Fp8Out& o, int64_t rows, int64_t cols, const char* op) {
  HWT_CHECK(o.active(), "{}: no fp8 copy to write", op);
  HWT_CHECK(
      is_fp8(o.dtype()) && (!o.out.defined() || !o.out_t.defined() || o.out.dtype == o.out_t.dtype),
      "{}: fp8 copies {} and {} must share one fp8 format", op, o.out.str(), o.out_t.str());
  HWT_CHECK(!o.out.defined() || (o.out.rows() == rows && o.out.cols() == cols),
            "{}: fp8 copy {} must be [{}, {}]", op, o.out.str(), rows, cols);
  HWT_CHECK(!o.out_t.defined() || (o.out_t.rows() == cols && o.out_t.cols() == rows),
            "{}: transposed fp8 copy {} must be [{}, {}]", op, o.out_t.str(), cols, rows);
  HWT_CHECK(
      o.scale.dtype == DType::F32 && o.scale.numel() == 1 && o.amax.defined() == o.counts.defined(),
      "{}: fp8 scale {}, amax {}, counts {}", op, o.scale.str(), o.amax.str(), o.counts.str());
  HWT_CHECK(!o.amax.defined() || (o.amax.dtype == DType::F32 && o.amax.numel() == 1 &&
                                  o.counts.dtype == DType::I32 && o.counts.numel() == 3),
            "{}: fp8 amax {} must be f32 [1] and counts {} i32 [3]", op, o.amax.str(),
            o.counts.str());
}

void cast_fp8_out(Backend& be, const Tensor& values, const Fp8Out& o) {
  be.fp8_cast({as_matrix(values), o});
}

}  // namespace hwt
