#include "backend/trace/trace_backend.h"

#include <fmt/format.h>

#include <cstring>

#include "backend/fp8_linear.h"
#include "backend/gemm.h"
#include "backend/ttm_table.h"

namespace hwt {
namespace {

// Estimated FLOPs per element of the non-GEMM work (exp, erf and tanh counted as one each).
constexpr double kActivationFlops = 8;  // GELU: cube, tanh or erf, scale, multiply
constexpr double kNormFlops = 8;        // mean, variance, normalise, scale and shift
constexpr double kNormBwdFlops = 12;
constexpr double kRmsNormFlops = 5;  // square, sum, normalise, scale (no mean, no shift)
constexpr double kRmsNormBwdFlops = 8;
constexpr double kSiluFlops = 4;     // exp, add, divide, multiply
constexpr double kRopeFlops = 3;     // per rotated element: two products and a sum
constexpr double kSoftmaxFlops = 5;  // scale, max, exp, sum, divide
constexpr double kDropoutFlops = 2;  // draw compare and scale

double n(const Tensor& t) {
  return t.defined() ? static_cast<double>(t.numel()) : 0.0;
}

// Memory traffic in bytes and in elements (whatever their dtype): a GPU moves the bytes, the
// accelerator simulator counts the elements in its own word format.
struct Io {
  double bytes = 0, elements = 0;
  Io operator+(const Io& o) const { return {bytes + o.bytes, elements + o.elements}; }
  Io operator*(double k) const { return {bytes * k, elements * k}; }
};

Io io(const Tensor& t) {
  return t.defined() ? Io{static_cast<double>(t.bytes()), n(t)} : Io{};
}

void set_io(OpRecord& r, const Io& read, const Io& written) {
  r.bytes_read = read.bytes;
  r.elements_read = read.elements;
  r.bytes_written = written.bytes;
  r.elements_written = written.elements;
}

double activation_flops(Activation act) {
  switch (act) {
    case Activation::None:
      return 0;
    case Activation::Relu:
      return 1;
    case Activation::Gelu:
    case Activation::GeluTanh:
    case Activation::GeGlu:
      return kActivationFlops;
    case Activation::SwiGlu:
      return kSiluFlops;
  }
  return 0;
}

double norm_flops(NormKind kind) {
  return kind == NormKind::RmsNorm ? kRmsNormFlops : kNormFlops;
}

double norm_backward_flops(NormKind kind) {
  return kind == NormKind::RmsNorm ? kRmsNormBwdFlops : kNormBwdFlops;
}

std::string_view glu_label(Activation kind) {
  return kind == Activation::GeGlu ? "geglu" : "swiglu";
}

std::string_view norm_kind_label(NormKind kind) {
  return kind == NormKind::RmsNorm ? " rmsnorm" : "";
}

// Adam-family state per parameter: fp32 params, grads and moments read and written.
void optimizer_record(OpRecord& r, const OptimizerTensors& t, int reads, int writes,
                      double flops_per_param) {
  const double count = n(t.params);
  r.params = t.params.numel();
  r.elements = r.params;
  r.flops = flops_per_param * count;
  set_io(r, Io{4.0 * reads * count, reads * count},
         Io{4.0 * writes * count, writes * count} + io(t.params_compute));
}

// A product of the fused attention kernels, per (batch, head): q, k, v, P and their gradients
// are seq × head_dim or seq × seq, in the activations' dtype. The trans flags are the storage
// each operand has (K and V as seq × head_dim, P as seq × seq).
GemmCall attention_gemm(const Tensor& qkv, int64_t m, int64_t nn, int64_t k, int64_t bh,
                        GemmRole role) {
  GemmCall g;
  g.shape = {m, nn, k, bh, false, false};
  switch (role) {
    case GemmRole::AttentionScores:    // Q·Kᵀ
    case GemmRole::AttentionProbGrad:  // dO·Vᵀ
      g.shape.trans_b = true;
      break;
    case GemmRole::AttentionValueGrad:  // Pᵀ·dO
    case GemmRole::AttentionKeyGrad:    // dSᵀ·Q
      g.shape.trans_a = true;
      break;
    default:
      break;
  }
  g.role = role;
  g.dtype = g.out_dtype = qkv.dtype;
  return g;
}

// Grouped-query attention's K/V heads in an attention record's detail (none for MHA).
std::string kv_label(const AttentionDims& d) {
  return d.kv() == d.heads ? std::string() : fmt::format(" kv_heads={}", d.kv());
}

// A norm's rows as stored, and the true width it normalises over when that is less (padding).
std::string norm_detail(const Shape& rows, int64_t width) {
  const int64_t w = norm_width(width, rows[rows.rank - 1]);
  return w < rows[rows.rank - 1] ? fmt::format("{} width={}", rows.str(), w) : rows.str();
}

// An op's fp8 copies (Fp8Out): what they write, and the detail's note of them.
Io fp8_out_io(const Fp8Out& f) {
  return io(f.out) + io(f.out_t);
}
std::string fp8_out_note(const Fp8Out& f) {
  if (!f.active()) return "";
  return fmt::format(" -> {}{}{}", dtype_name(f.dtype()), f.out.defined() ? " copy" : "",
                     f.out_t.defined() ? " transposed copy" : "");
}

}  // namespace

Workload TraceBackend::take_workload() {
  workload_.peak_bytes = 0;
  for (size_t b : allocations_) workload_.peak_bytes += static_cast<double>(b);
  return std::move(workload_);
}

void TraceBackend::clear() {
  workload_.ops.clear();
}

void* TraceBackend::allocate(size_t bytes) {
  allocations_.push_back(bytes);
  return nullptr;
}

void TraceBackend::download(void* host, Tensor src) {
  std::memset(host, 0, src.bytes());
}

void TraceBackend::set_scope(std::string_view label, Phase phase) {
  scope_ = label;
  phase_ = phase;
}

OpRecord& TraceBackend::record(Op op, OpKind kind, DType dtype) {
  OpRecord& r = workload_.ops.emplace_back();
  r.op = op;
  r.scope = scope_;
  r.phase = phase_;
  r.kind = kind;
  r.dtype = dtype;
  return r;
}

void TraceBackend::copy(const Copy& a) {
  OpRecord& r = record(Op::copy, OpKind::Elementwise, a.dst.dtype);
  r.elements = a.dst.numel();
  set_io(r, io(a.src), io(a.dst));
}

void TraceBackend::fill(const Fill& a) {
  OpRecord& r = record(Op::fill, OpKind::Elementwise, a.t.dtype);
  r.elements = a.t.numel();
  set_io(r, {}, io(a.t));
}

void TraceBackend::convert(const Convert& a) {
  OpRecord& r = record(Op::convert, OpKind::Elementwise, a.dst.dtype);
  r.elements = a.dst.numel();
  set_io(r, io(a.src), io(a.dst));
}

void TraceBackend::fp8_cast(const Fp8Cast& a) {
  const Fp8Out& to = a.to;
  OpRecord& r = record(Op::fp8_cast, OpKind::Elementwise, to.dtype());
  r.elements = a.x.numel();
  r.flops = n(a.x);  // the multiplication by the scale
  set_io(r, io(a.x) + io(to.scale), fp8_out_io(to) + io(to.amax) + io(to.counts));
  r.detail = fmt::format("x{}{}", a.x.shape.str(), fp8_out_note(to));
}

void TraceBackend::fp8_scale_update(const Fp8ScaleUpdate& a) {
  OpRecord& r = record(Op::fp8_scale_update, OpKind::Optimizer, DType::F32);
  r.elements = a.history.numel();
  r.flops = n(a.history);  // one comparison per amax of the window
  set_io(r, io(a.amax) + io(a.history) + io(a.scale),
         io(a.amax) + io(a.history) + io(a.scale) + io(a.scale_inv));
}

void TraceBackend::linear_forward(const LinearFwd& a) {
  cast_forward_operands(*this, a);
  OpRecord& r = record(Op::linear_forward, OpKind::Gemm, a.x.dtype);
  const int64_t m = a.x.rows(), nn = a.w.dim(0);
  r.gemms.push_back(gemm_call(linear_forward_product(a), GemmRole::LinearForward));
  r.elements = m * nn;
  r.flops = r.gemm_flops() + (a.b.defined() ? 1.0 : 0.0) * static_cast<double>(m * nn) +
            activation_flops(a.act) * static_cast<double>(m * nn);
  set_io(r, io(a.x) + io(a.w) + io(a.b), io(a.y) + io(a.pre_act));
  r.detail =
      fmt::format("x{} w{} act={}", a.x.shape.str(), a.w.shape.str(), static_cast<int>(a.act));
}

// The product, the norm before it and the gating and residual after it; the norm's and the
// product's intermediate results stay on chip.
void TraceBackend::fused_linear_forward(const FusedLinearFwd& a) {
  OpRecord& r = record(Op::fused_linear_forward, OpKind::Gemm, a.x.dtype);
  const int64_t m = a.x.rows(), out = a.y.cols(), product = a.w.dim(0);
  Matmul p;
  p.a = a.x;
  p.b = a.w;
  p.c = Tensor{nullptr, Shape{m, product}, a.y.dtype, Device::Trace};
  p.trans_b = true;
  p.bias = a.b;
  r.gemms.push_back(gemm_call(p, GemmRole::LinearForward));
  r.elements = m * out;
  const bool gated = is_gated(a.act);
  r.flops = r.gemm_flops() + (a.b.defined() ? 1.0 : 0.0) * static_cast<double>(m * product) +
            (activation_flops(a.act) + (gated ? 1 : 0) + (a.residual.defined() ? 1 : 0)) *
                static_cast<double>(m * out) +
            (a.gamma.defined() ? norm_flops(a.kind) : 0.0) * n(a.x);
  set_io(r, io(a.x) + io(a.w) + io(a.b) + io(a.gamma) + io(a.beta) + io(a.residual), io(a.y));
  r.detail = fmt::format("x{} w{} act={} norm={} residual={}", a.x.shape.str(), a.w.shape.str(),
                         static_cast<int>(a.act), a.gamma.defined(), a.residual.defined());
}

void TraceBackend::linear_backward(const LinearBwd& a) {
  if (a.dx.defined()) cast_input_grad_operands(*this, a);
  cast_weight_grad_operands(*this, a);
  OpRecord& r = record(Op::linear_backward, OpKind::Gemm, a.dy.dtype);
  const int64_t m = a.x.rows(), k = a.x.cols(), nn = a.w.dim(0);
  if (a.dx.defined())
    r.gemms.push_back(gemm_call(linear_input_grad_product(a), GemmRole::LinearInputGrad));
  r.gemms.push_back(gemm_call(linear_weight_grad_product(a), GemmRole::LinearWeightGrad));
  r.elements = m * k;
  r.flops = r.gemm_flops() + (a.db.defined() ? 1.0 : 0.0) * static_cast<double>(m * nn) +
            2 * activation_flops(a.act) * static_cast<double>(m * nn);
  set_io(r,
         io(a.x) + io(a.w) + io(a.dy) + io(a.pre_act) + io(a.dw) + io(a.db) +
             (a.accumulate_dx ? io(a.dx) : Io{}),
         io(a.dx) + io(a.dw) + io(a.db) + (a.act != Activation::None ? io(a.dy) : Io{}));
  r.detail = fmt::format("x{} w{} dy{}", a.x.shape.str(), a.w.shape.str(), a.dy.shape.str());
}

void TraceBackend::matmul(const Matmul& a) {
  OpRecord& r = record(Op::matmul, OpKind::Gemm, a.a.dtype);
  r.gemms.push_back(gemm_call(a, GemmRole::Matmul));
  const GemmShape& s = r.gemms.back().shape;
  r.elements = s.batch * s.m * s.n;
  r.flops = r.gemm_flops() + ((a.bias.defined() ? 1.0 : 0.0) + activation_flops(a.act)) *
                                 static_cast<double>(r.elements);
  set_io(r, io(a.a) + io(a.b) + (a.beta != 0.0f ? io(a.c) : Io{}) + io(a.bias),
         io(a.c) + io(a.pre_act));
  r.detail = fmt::format("a{} b{}", a.a.shape.str(), a.b.shape.str());
}

void TraceBackend::layernorm_forward(const LayerNormFwd& a) {
  OpRecord& r = record(Op::layernorm_forward, OpKind::Norm, a.x.dtype);
  r.rows = a.x.rows();
  r.cols = a.x.cols();
  r.elements = a.x.numel();
  r.flops = norm_flops(a.kind) * n(a.x);
  set_io(r, io(a.x) + io(a.gamma) + io(a.beta), io(a.y) + io(a.mean) + io(a.rstd));
  r.detail = fmt::format("{}{}", norm_detail(a.x.shape, a.width), norm_kind_label(a.kind));
}

void TraceBackend::layernorm_backward(const LayerNormBwd& a) {
  OpRecord& r = record(Op::layernorm_backward, OpKind::Norm, a.x.dtype);
  r.rows = a.x.rows();
  r.cols = a.x.cols();
  r.elements = a.x.numel();
  r.flops = norm_backward_flops(a.kind) * n(a.x);
  set_io(r,
         io(a.x) + io(a.dy) + io(a.gamma) + io(a.mean) + io(a.rstd) +
             (a.accumulate_dx ? io(a.dx) : Io{}),
         io(a.dx) + io(a.dgamma) + io(a.dbeta));
  r.detail = fmt::format("{}{}", norm_detail(a.x.shape, a.width), norm_kind_label(a.kind));
}

void TraceBackend::residual_forward(const ResidualFwd& a) {
  const bool ln = a.gamma.defined();
  OpRecord& r = record(Op::residual_forward, ln ? OpKind::Norm : OpKind::Elementwise, a.x.dtype);
  r.rows = a.x.rows();
  r.cols = a.x.cols();
  r.elements = a.x.numel();
  r.flops = (1 + (a.drop.active() ? kDropoutFlops : 0) + (ln ? norm_flops(a.kind) : 0)) * n(a.x);
  set_io(r, io(a.x) + io(a.residual) + io(a.gamma) + io(a.beta),
         io(a.sum) + io(a.y) + io(a.mean) + io(a.rstd));
  r.detail = fmt::format("{} dropout={} layernorm={}{}", norm_detail(a.x.shape, a.width), a.drop.p,
                         ln, ln ? norm_kind_label(a.kind) : "");
}

void TraceBackend::residual_backward(const ResidualBwd& a) {
  const bool ln = a.gamma.defined();
  OpRecord& r = record(Op::residual_backward, ln ? OpKind::Norm : OpKind::Elementwise, a.d_x.dtype);
  r.rows = a.d_x.rows();
  r.cols = a.d_x.cols();
  r.elements = a.d_x.numel();
  r.flops = (1 + (a.drop.active() ? kDropoutFlops : 0) + (ln ? norm_backward_flops(a.kind) : 0)) *
            n(a.d_x);
  set_io(r,
         io(a.d_sum) + io(a.d_y) + (ln ? io(a.sum) + io(a.gamma) + io(a.mean) + io(a.rstd) : Io{}),
         io(a.d_x) + io(a.d_residual) + io(a.d_gamma) + io(a.d_beta));
  r.detail =
      fmt::format("{}{}", norm_detail(a.d_x.shape, a.width), ln ? norm_kind_label(a.kind) : "");
}

void TraceBackend::dropout_forward(const DropoutFwd& a) {
  OpRecord& r = record(Op::dropout_forward, OpKind::Elementwise, a.x.dtype);
  r.elements = a.x.numel();
  r.flops = kDropoutFlops * n(a.x);
  set_io(r, io(a.x), io(a.y));
}

void TraceBackend::dropout_backward(const DropoutBwd& a) {
  OpRecord& r = record(Op::dropout_backward, OpKind::Elementwise, a.dy.dtype);
  r.elements = a.dy.numel();
  r.flops = kDropoutFlops * n(a.dy);
  set_io(r, io(a.dy), io(a.dx));
}

void TraceBackend::glu_forward(const GluFwd& a) {
  const int64_t rows = a.pre.rows(), half = a.pre.cols() / 2;
  OpRecord& r = record(Op::glu_forward, OpKind::Elementwise, a.pre.dtype);
  r.elements = rows * half;
  r.flops = (activation_flops(a.kind) + 1) * static_cast<double>(rows * half);
  set_io(r, io(a.pre), io(a.y) + fp8_out_io(a.fp8));
  r.detail = fmt::format("pre{} {}{}", a.pre.shape.str(), glu_label(a.kind), fp8_out_note(a.fp8));
}

void TraceBackend::glu_backward(const GluBwd& a) {
  OpRecord& r = record(Op::glu_backward, OpKind::Elementwise, a.dy.dtype);
  r.elements = a.pre.numel();
  r.flops = (2 * activation_flops(a.kind) + 3) * n(a.dy);  // act and act', three products
  set_io(r, io(a.pre) + io(a.dy), io(a.d_pre) + fp8_out_io(a.fp8));
  r.detail = fmt::format("pre{} {}{}", a.pre.shape.str(), glu_label(a.kind), fp8_out_note(a.fp8));
}

namespace {

// The q and k heads of a head norm's qkv: what it reads, normalises and writes.
void head_norm_record(OpRecord& r, const HeadNormShape& h, const Tensor& qkv, double flops, Io in,
                      Io out) {
  const double normed = static_cast<double>(qkv.rows() * h.normed() * h.head_dim);
  const double share = normed / n(qkv);
  r.rows = qkv.rows() * h.normed();
  r.cols = h.head_dim;
  r.elements = static_cast<int64_t>(normed);
  r.flops = flops * normed;
  set_io(r, io(qkv) * share + in, io(qkv) * share + out);
  r.detail = fmt::format("qkv{} heads={} kv_heads={} head_dim={} width={}", qkv.shape.str(),
                         h.heads, h.kv(), h.head_dim, norm_width(h.width, h.head_dim));
}

}  // namespace

void TraceBackend::head_norm_forward(const HeadNormFwd& a) {
  head_norm_record(record(Op::head_norm_forward, OpKind::Norm, a.qkv.dtype), a.shape, a.qkv,
                   kRmsNormFlops, io(a.q_gamma) + io(a.k_gamma), io(a.saved) + io(a.rstd));
}

void TraceBackend::head_norm_backward(const HeadNormBwd& a) {
  head_norm_record(
      record(Op::head_norm_backward, OpKind::Norm, a.d_qkv.dtype), a.shape, a.d_qkv,
      kRmsNormBwdFlops,
      io(a.saved) + io(a.rstd) + io(a.q_gamma) + io(a.k_gamma) + io(a.d_q_gamma) + io(a.d_k_gamma),
      io(a.d_q_gamma) + io(a.d_k_gamma));
}

namespace {

void rope_record(OpRecord& r, const Rope& a) {
  const int64_t kv = a.kv();
  const double rotated = static_cast<double>(a.qkv.rows() * (a.heads + kv) * a.rotary_dim);
  const double share = rotated / n(a.qkv);  // of qkv read and written: the rotated q and k
  r.elements = static_cast<int64_t>(rotated);
  r.flops = kRopeFlops * rotated;
  set_io(r, io(a.qkv) * share + io(a.cos) + io(a.sin), io(a.qkv) * share);
  r.detail = fmt::format("qkv{} heads={} kv_heads={} rotary_dim={}", a.qkv.shape.str(), a.heads, kv,
                         a.rotary_dim);
}

}  // namespace

void TraceBackend::rope_forward(const Rope& a) {
  rope_record(record(Op::rope_forward, OpKind::Elementwise, a.qkv.dtype), a);
}

void TraceBackend::rope_backward(const Rope& a) {
  rope_record(record(Op::rope_backward, OpKind::Elementwise, a.qkv.dtype), a);
}

void TraceBackend::attention_forward(const AttentionFwd& a) {
  const AttentionDims& d = a.dims;
  OpRecord& r = record(Op::attention_forward, OpKind::Attention, a.qkv.dtype);
  const int64_t bh = d.batch * d.heads;
  r.gemms.push_back(attention_gemm(a.qkv, d.seq, d.seq, d.head_dim, bh, GemmRole::AttentionScores));
  r.gemms.push_back(
      attention_gemm(a.qkv, d.seq, d.head_dim, d.seq, bh, GemmRole::AttentionContext));
  r.rows = bh * d.seq;
  r.cols = d.seq;
  r.elements = a.out.numel();
  r.flops = r.gemm_flops() + (kSoftmaxFlops + (d.drop.active() ? kDropoutFlops : 0)) *
                                 static_cast<double>(r.rows * r.cols);
  set_io(r, io(a.qkv) + io(d.key_lengths), io(a.out) + io(a.lse));
  r.computed_share = d.causal ? 0.5 : 1.0;
  r.detail = fmt::format("b={} s={} heads={}{} d={} causal={}", d.batch, d.seq, d.heads,
                         kv_label(d), d.head_dim, d.causal);
}

void TraceBackend::kv_append(const KvAppend& a) {
  OpRecord& r = record(Op::kv_append, OpKind::Elementwise, a.qkv.dtype);
  // The k and v heads of each row are read and written once; under rotary positions the q heads
  // are read and turned too, and the turned q and k written back.
  const double moved = static_cast<double>(a.qkv.rows() * 2 * a.kv() * a.head_dim);
  const Rope& rope = a.rope;
  const bool rotary = rope.rotary_dim > 0;
  const double rotated =
      rotary ? static_cast<double>(a.qkv.rows() * (a.heads + a.kv()) * rope.rotary_dim) : 0.0;
  const double q = rotary ? static_cast<double>(a.qkv.rows() * a.heads * a.head_dim) : 0.0;
  r.elements = static_cast<int64_t>(moved);
  r.flops = kRopeFlops * rotated;
  const double elem = static_cast<double>(dtype_size(a.qkv.dtype));
  set_io(r,
         Io{(moved + q) * elem, moved + q} + io(a.start) +
             (rotary ? io(rope.cos) + io(rope.sin) : Io{}),
         Io{(moved + rotated) * elem, moved + rotated});
  r.detail =
      fmt::format("qkv{} seq={} kv_heads={} d={}", a.qkv.shape.str(), a.seq, a.kv(), a.head_dim);
  if (rotary) r.detail += fmt::format(" rotary_dim={}", rope.rotary_dim);
}

// The keys' count lives on the device; the trace counts the cache's capacity, the bound.
void TraceBackend::decode_attention(const DecodeAttention& a) {
  OpRecord& r = record(Op::decode_attention, OpKind::Attention, a.qkv.dtype);
  const int64_t batch = a.qkv.rows(), bh = batch * a.heads, keys = a.cache.capacity();
  r.gemms.push_back(attention_gemm(a.qkv, 1, keys, a.head_dim, bh, GemmRole::AttentionScores));
  r.gemms.push_back(attention_gemm(a.qkv, 1, a.head_dim, keys, bh, GemmRole::AttentionContext));
  r.rows = bh;
  r.cols = keys;
  r.elements = a.out.numel();
  r.flops = r.gemm_flops() + kSoftmaxFlops * static_cast<double>(r.rows * r.cols);
  // Each sequence's K and V rows are read once, whatever the number of query heads sharing them.
  const Io cache = (io(a.cache.k) + io(a.cache.v)) *
                   (static_cast<double>(batch) / static_cast<double>(a.cache.k.dim(0)));
  const double qkv_heads = static_cast<double>(a.heads + 2 * a.kv());
  Io read = io(a.qkv) * (static_cast<double>(a.heads) / qkv_heads) + cache + io(a.lengths);
  Io written = io(a.out);
  r.detail = fmt::format("b={} heads={} kv_heads={} d={} keys<={}", batch, a.heads, a.kv(),
                         a.head_dim, keys);
  if (a.start.defined()) {  // the new k and v heads into the cache, turned with q on the way
    const Io kv = io(a.qkv) * (2.0 * static_cast<double>(a.kv()) / qkv_heads);
    read = read + kv + io(a.start);
    written = written + kv;
    if (a.rope.rotary_dim > 0) {
      read = read + io(a.rope.cos) + io(a.rope.sin);
      r.flops += kRopeFlops * static_cast<double>(batch * (a.heads + a.kv()) * a.rope.rotary_dim);
      r.detail += fmt::format(" rotary_dim={}", a.rope.rotary_dim);
    }
    r.detail += " appends";
  }
  set_io(r, read, written);
}

void TraceBackend::decode_advance(const DecodeAdvance& a) {
  const int64_t batch = a.checked_batch();
  OpRecord& r = record(Op::decode_advance, OpKind::Elementwise, DType::I32);
  r.rows = batch;
  r.elements = batch;
  // One element of each [batch] tensor read, each written but picks, and one token per sequence.
  const Io one = io(a.picks);
  set_io(r, one * 2.0, one * 4.0);
}

void TraceBackend::attention_backward(const AttentionBwd& a) {
  const AttentionDims& d = a.dims;
  OpRecord& r = record(Op::attention_backward, OpKind::Attention, a.qkv.dtype);
  const int64_t bh = d.batch * d.heads;
  const int64_t s = d.seq, hd = d.head_dim;
  r.gemms.push_back(attention_gemm(a.qkv, s, hd, s, bh, GemmRole::AttentionValueGrad));
  r.gemms.push_back(attention_gemm(a.qkv, s, s, hd, bh, GemmRole::AttentionProbGrad));
  r.gemms.push_back(attention_gemm(a.qkv, s, hd, s, bh, GemmRole::AttentionQueryGrad));
  r.gemms.push_back(attention_gemm(a.qkv, s, hd, s, bh, GemmRole::AttentionKeyGrad));
  r.rows = bh * s;
  r.cols = s;
  r.elements = a.d_qkv.numel();
  r.flops = r.gemm_flops() + (kSoftmaxFlops + (d.drop.active() ? kDropoutFlops : 0)) *
                                 static_cast<double>(r.rows * r.cols);
  // Under rotary positions dQ and dK are turned back as they are stored: the rotation's
  // products and its tables' reads, no pass of its own over d_qkv.
  const Rope& rope = a.rope;
  const bool rotary = rope.rotary_dim > 0;
  if (rotary)
    r.flops +=
        kRopeFlops * static_cast<double>(a.d_qkv.rows() * (d.heads + d.kv()) * rope.rotary_dim);
  set_io(r,
         io(a.qkv) + io(a.out) + io(a.d_out) + io(a.lse) + io(d.key_lengths) +
             (rotary ? io(rope.cos) + io(rope.sin) : Io{}),
         io(a.d_qkv));
  r.computed_share = d.causal ? 0.5 : 1.0;
  r.detail = fmt::format("b={} s={} heads={}{} d={} causal={}", d.batch, s, d.heads, kv_label(d),
                         hd, d.causal);
  if (rotary) r.detail += fmt::format(" rotary_dim={}", rope.rotary_dim);
}

void TraceBackend::embedding_forward(const EmbeddingFwd& a) {
  OpRecord& r = record(Op::embedding_forward, OpKind::Embedding, a.out.dtype);
  r.rows = a.out.rows();
  r.cols = a.out.cols();
  r.elements = a.out.numel();
  r.flops = (a.pos.defined() ? 1.0 : 0.0) * n(a.out);
  set_io(r, io(a.ids) + io(a.out) * (a.pos.defined() ? 2.0 : 1.0), io(a.out));
  r.detail = fmt::format("table{} rows={}", a.table.shape.str(), a.out.rows());
}

void TraceBackend::embedding_backward(const EmbeddingBwd& a) {
  OpRecord& r = record(Op::embedding_backward, OpKind::Embedding, a.d_out.dtype);
  r.rows = a.d_out.rows();
  r.cols = a.d_out.cols();
  r.elements = a.d_out.numel();
  r.flops = (a.d_pos.defined() ? 2.0 : 1.0) * n(a.d_out);
  // The gradients are accumulated in f32 (d_pos too when there are positions).
  set_io(r, io(a.ids) + io(a.d_out),
         Io{4.0 * n(a.d_out), n(a.d_out)} * (a.d_pos.defined() ? 2.0 : 1.0));
  r.detail = fmt::format("table{} rows={}", a.d_table.shape.str(), a.d_out.rows());
}

void TraceBackend::tt_embedding_forward(const TtEmbeddingFwd& a) {
  OpRecord& r = record(Op::tt_embedding_forward, OpKind::Embedding, a.out.dtype);
  const TtmTable t = ttm_table(a.cores);
  r.rows = a.out.rows();
  r.cols = a.out.cols();
  r.elements = a.out.numel();
  r.flops = t.forward_flops() * n(a.ids) + (a.pos.defined() ? 1.0 : 0.0) * n(a.out);
  Io cores;
  for (const Tensor& g : a.cores) cores = cores + io(g);
  set_io(r, io(a.ids) + cores + io(a.pos), io(a.out));
  r.detail = fmt::format("ttm cores={} rows={}", t.cores(), a.out.rows());
}

void TraceBackend::tt_embedding_backward(const TtEmbeddingBwd& a) {
  OpRecord& r = record(Op::tt_embedding_backward, OpKind::Embedding, a.d_out.dtype);
  const TtmTable t = ttm_table(a.cores);
  r.rows = a.d_out.rows();
  r.cols = a.d_out.cols();
  r.elements = a.d_out.numel();
  double slices = 0;
  for (size_t k = 0; k < t.cores(); ++k) slices += static_cast<double>(t.slice(k));
  // Per row: its core gradients, then their sum into the cores (f32, read and written).
  r.flops = (t.backward_flops() + slices) * n(a.ids) + (a.d_pos.defined() ? 1.0 : 0.0) * n(a.d_out);
  Io cores, grads;
  for (const Tensor& g : a.cores) cores = cores + io(g);
  for (const Tensor& g : a.d_cores) grads = grads + io(g);
  set_io(r, io(a.ids) + io(a.d_out) + cores + grads + io(a.d_pos), grads + io(a.d_pos));
  r.detail = fmt::format("ttm cores={} rows={}", t.cores(), a.d_out.rows());
}

void TraceBackend::pool_forward(const PoolFwd& a) {
  OpRecord& r = record(Op::pool_forward, OpKind::Pooling, a.x.dtype);
  r.elements = a.out.numel();
  r.flops = a.mode == Pooling::Mean ? n(a.x) : 0.0;
  set_io(r, a.mode == Pooling::Mean ? io(a.x) : io(a.out), io(a.out));
}

void TraceBackend::pool_backward(const PoolBwd& a) {
  OpRecord& r = record(Op::pool_backward, OpKind::Pooling, a.d_out.dtype);
  r.elements = a.d_x.numel();
  r.flops = a.mode == Pooling::Mean ? n(a.d_x) : 0.0;
  set_io(r, io(a.d_out) + (a.mode == Pooling::Mean ? io(a.d_x) : io(a.d_out)),
         a.mode == Pooling::Mean ? io(a.d_x) : io(a.d_out));
}

void TraceBackend::cross_entropy(const CrossEntropy& a) {
  OpRecord& r = record(Op::cross_entropy, OpKind::Loss, a.logits.dtype);
  r.rows = a.logits.rows();
  r.cols = a.logits.cols();
  r.elements = a.logits.numel();
  const bool grad = a.d_logits.defined() || a.fp8.active();
  r.flops = (kSoftmaxFlops + (grad ? 2.0 : 0.0)) * n(a.logits);
  // The fp8 copies are written by a second pass over the logits.
  set_io(r, io(a.logits) + io(a.targets) + (a.fp8.active() ? io(a.logits) + io(a.lse) : Io{}),
         io(a.losses) + io(a.d_logits) + io(a.lse) + fp8_out_io(a.fp8));
  if (a.fp8.active())
    r.detail = fmt::format("logits{}{}", a.logits.shape.str(), fp8_out_note(a.fp8));
}

void TraceBackend::argmax_rows(const ArgmaxRows& a) {
  OpRecord& r = record(Op::argmax_rows, OpKind::Reduction, a.logits.dtype);
  r.rows = a.logits.rows();
  r.cols = a.logits.cols();
  r.flops = n(a.logits);
  set_io(r, io(a.logits), io(a.out));
}

void TraceBackend::sum(const Reduce& a) {
  OpRecord& r = record(Op::sum, OpKind::Reduction, a.x.dtype);
  r.flops = n(a.x);
  set_io(r, io(a.x), io(a.out));
}

void TraceBackend::sum_squares(const Reduce& a) {
  OpRecord& r = record(Op::sum_squares, OpKind::Reduction, a.x.dtype);
  r.flops = 2 * n(a.x);
  set_io(r, io(a.x), io(a.out));
}

// A compare and a select per element, the zero count; the tensor is read and written in place.
void TraceBackend::prune_small(const PruneSmall& a) {
  OpRecord& r = record(Op::prune_small, OpKind::Elementwise, a.x.dtype);
  r.elements = a.x.numel();
  r.flops = 2 * n(a.x);
  set_io(r, io(a.x), io(a.x));
}

void TraceBackend::adamw_step(const AdamWStep& a) {
  optimizer_record(record(Op::adamw_step, OpKind::Optimizer, DType::F32), a.t, 4, 3, 16);
}

void TraceBackend::adan_step(const AdanStep& a) {
  optimizer_record(record(Op::adan_step, OpKind::Optimizer, DType::F32), a.t, 6, 5, 28);
}

void TraceBackend::sgd_step(const SgdStep& a) {
  optimizer_record(record(Op::sgd_step, OpKind::Optimizer, DType::F32), a.t, 3, 2, 5);
}

void TraceBackend::loss_scale_update(const LossScaleUpdate& a) {
  OpRecord& r = record(Op::loss_scale_update, OpKind::Optimizer, DType::F32);
  r.elements = 1;
  set_io(r, io(a.state) + io(a.grad_norm_sq), io(a.state));
}

}  // namespace hwt
