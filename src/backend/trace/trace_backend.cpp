#include "backend/trace/trace_backend.h"

#include <fmt/format.h>

#include <cstring>

namespace hwt {
namespace {

// Estimated FLOPs per element of the non-GEMM work (exp, erf and tanh counted as one each).
constexpr double kActivationFlops = 8;  // GELU: cube, tanh or erf, scale, multiply
constexpr double kNormFlops = 8;        // mean, variance, normalise, scale and shift
constexpr double kNormBwdFlops = 12;
constexpr double kSoftmaxFlops = 5;  // scale, max, exp, sum, divide
constexpr double kDropoutFlops = 2;  // draw compare and scale

double b(const Tensor& t) {
  return t.defined() ? static_cast<double>(t.bytes()) : 0.0;
}
double n(const Tensor& t) {
  return t.defined() ? static_cast<double>(t.numel()) : 0.0;
}

double activation_flops(Activation act) {
  switch (act) {
    case Activation::None:
      return 0;
    case Activation::Relu:
      return 1;
    case Activation::Gelu:
    case Activation::GeluTanh:
      return kActivationFlops;
  }
  return 0;
}

// Adam-family state per parameter: fp32 params, grads and moments read and written.
void optimizer_record(OpRecord& r, const OptimizerTensors& t, int reads, int writes,
                      double flops_per_param) {
  const double count = n(t.params);
  r.params = t.params.numel();
  r.elements = r.params;
  r.flops = flops_per_param * count;
  r.bytes_read = 4.0 * reads * count;
  r.bytes_written = 4.0 * writes * count + b(t.params_compute);
}

}  // namespace

Workload TraceBackend::take_workload() {
  workload_.peak_bytes = allocated_;
  return std::move(workload_);
}

void TraceBackend::clear() {
  workload_.ops.clear();
}

void* TraceBackend::allocate(size_t bytes) {
  allocated_ += static_cast<double>(bytes);
  return nullptr;
}

void TraceBackend::download(void* host, Tensor src) {
  std::memset(host, 0, src.bytes());
}

void TraceBackend::set_scope(std::string_view label, Phase phase) {
  scope_ = label;
  phase_ = phase;
}

OpRecord& TraceBackend::record(std::string op, OpKind kind, DType dtype) {
  OpRecord& r = workload_.ops.emplace_back();
  r.op = std::move(op);
  r.scope = scope_;
  r.phase = phase_;
  r.kind = kind;
  r.dtype = dtype;
  return r;
}

void TraceBackend::copy(Tensor dst, Tensor src) {
  OpRecord& r = record("copy", OpKind::Elementwise, dst.dtype);
  r.elements = dst.numel();
  r.bytes_read = b(src);
  r.bytes_written = b(dst);
}

void TraceBackend::fill(Tensor t, float) {
  OpRecord& r = record("fill", OpKind::Elementwise, t.dtype);
  r.elements = t.numel();
  r.bytes_written = b(t);
}

void TraceBackend::convert(Tensor dst, Tensor src) {
  OpRecord& r = record("convert", OpKind::Elementwise, dst.dtype);
  r.elements = dst.numel();
  r.bytes_read = b(src);
  r.bytes_written = b(dst);
}

void TraceBackend::linear_forward(const LinearFwd& a) {
  OpRecord& r = record("linear_forward", OpKind::Gemm, a.x.dtype);
  const int64_t m = a.x.rows(), k = a.x.cols(), nn = a.w.dim(0);
  r.gemms.push_back({m, nn, k, 1, Operand::Activation, Operand::Weight});
  r.elements = m * nn;
  r.flops = r.gemm_flops() + (a.b.defined() ? 1.0 : 0.0) * static_cast<double>(m * nn) +
            activation_flops(a.act) * static_cast<double>(m * nn);
  r.bytes_read = b(a.x) + b(a.w) + b(a.b);
  r.bytes_written = b(a.y) + b(a.pre_act);
  r.detail =
      fmt::format("x{} w{} act={}", a.x.shape.str(), a.w.shape.str(), static_cast<int>(a.act));
}

void TraceBackend::linear_backward(const LinearBwd& a) {
  OpRecord& r = record("linear_backward", OpKind::Gemm, a.dy.dtype);
  const int64_t m = a.x.rows(), k = a.x.cols(), nn = a.w.dim(0);
  if (a.dx.defined()) r.gemms.push_back({m, k, nn, 1, Operand::Gradient, Operand::Weight});
  r.gemms.push_back({nn, k, m, 1, Operand::Gradient, Operand::Activation});
  r.elements = m * k;
  r.flops = r.gemm_flops() + (a.db.defined() ? 1.0 : 0.0) * static_cast<double>(m * nn) +
            2 * activation_flops(a.act) * static_cast<double>(m * nn);
  r.bytes_read = b(a.x) + b(a.w) + b(a.dy) + b(a.pre_act) + b(a.dw) + b(a.db) +
                 (a.accumulate_dx ? b(a.dx) : 0.0);
  r.bytes_written = b(a.dx) + b(a.dw) + b(a.db) + (a.act != Activation::None ? b(a.dy) : 0.0);
  r.detail = fmt::format("x{} w{} dy{}", a.x.shape.str(), a.w.shape.str(), a.dy.shape.str());
}

void TraceBackend::matmul(const Matmul& a) {
  OpRecord& r = record("matmul", OpKind::Gemm, a.a.dtype);
  const bool batched = a.a.shape.rank == 3;
  const int64_t batch = batched ? a.a.dim(0) : 1;
  const int64_t m = a.trans_a ? a.a.dim(-1) : a.a.dim(-2);
  const int64_t k = a.trans_a ? a.a.dim(-2) : a.a.dim(-1);
  const int64_t nn = a.trans_b ? a.b.dim(-2) : a.b.dim(-1);
  r.gemms.push_back({m, nn, k, batch, Operand::Activation, Operand::Activation});
  r.elements = batch * m * nn;
  r.flops = r.gemm_flops();
  r.bytes_read = b(a.a) + b(a.b) + (a.beta != 0.0f ? b(a.c) : 0.0);
  r.bytes_written = b(a.c);
  r.detail = fmt::format("a{} b{}", a.a.shape.str(), a.b.shape.str());
}

void TraceBackend::layernorm_forward(const LayerNormFwd& a) {
  OpRecord& r = record("layernorm_forward", OpKind::Norm, a.x.dtype);
  r.rows = a.x.rows();
  r.cols = a.x.cols();
  r.elements = a.x.numel();
  r.flops = kNormFlops * n(a.x);
  r.bytes_read = b(a.x) + b(a.gamma) + b(a.beta);
  r.bytes_written = b(a.y) + b(a.mean) + b(a.rstd);
  r.detail = a.x.shape.str();
}

void TraceBackend::layernorm_backward(const LayerNormBwd& a) {
  OpRecord& r = record("layernorm_backward", OpKind::Norm, a.x.dtype);
  r.rows = a.x.rows();
  r.cols = a.x.cols();
  r.elements = a.x.numel();
  r.flops = kNormBwdFlops * n(a.x);
  r.bytes_read =
      b(a.x) + b(a.dy) + b(a.gamma) + b(a.mean) + b(a.rstd) + (a.accumulate_dx ? b(a.dx) : 0.0);
  r.bytes_written = b(a.dx) + b(a.dgamma) + b(a.dbeta);
  r.detail = a.x.shape.str();
}

void TraceBackend::residual_forward(const ResidualFwd& a) {
  const bool ln = a.gamma.defined();
  OpRecord& r = record("residual_forward", ln ? OpKind::Norm : OpKind::Elementwise, a.x.dtype);
  r.rows = a.x.rows();
  r.cols = a.x.cols();
  r.elements = a.x.numel();
  r.flops = (1 + (a.drop.active() ? kDropoutFlops : 0) + (ln ? kNormFlops : 0)) * n(a.x);
  r.bytes_read = b(a.x) + b(a.residual) + b(a.gamma) + b(a.beta);
  r.bytes_written = b(a.sum) + b(a.y) + b(a.mean) + b(a.rstd);
  r.detail = fmt::format("{} dropout={} layernorm={}", a.x.shape.str(), a.drop.p, ln);
}

void TraceBackend::residual_backward(const ResidualBwd& a) {
  const bool ln = a.gamma.defined();
  OpRecord& r = record("residual_backward", ln ? OpKind::Norm : OpKind::Elementwise, a.d_x.dtype);
  r.rows = a.d_x.rows();
  r.cols = a.d_x.cols();
  r.elements = a.d_x.numel();
  r.flops = (1 + (a.drop.active() ? kDropoutFlops : 0) + (ln ? kNormBwdFlops : 0)) * n(a.d_x);
  r.bytes_read = b(a.d_sum) + b(a.d_y) + (ln ? b(a.sum) + b(a.gamma) + b(a.mean) + b(a.rstd) : 0);
  r.bytes_written = b(a.d_x) + b(a.d_residual) + b(a.d_gamma) + b(a.d_beta);
  r.detail = a.d_x.shape.str();
}

void TraceBackend::dropout_forward(const DropoutFwd& a) {
  OpRecord& r = record("dropout_forward", OpKind::Elementwise, a.x.dtype);
  r.elements = a.x.numel();
  r.flops = kDropoutFlops * n(a.x);
  r.bytes_read = b(a.x);
  r.bytes_written = b(a.y);
}

void TraceBackend::dropout_backward(const DropoutBwd& a) {
  OpRecord& r = record("dropout_backward", OpKind::Elementwise, a.dy.dtype);
  r.elements = a.dy.numel();
  r.flops = kDropoutFlops * n(a.dy);
  r.bytes_read = b(a.dy);
  r.bytes_written = b(a.dx);
}

void TraceBackend::attention_forward(const AttentionFwd& a) {
  const AttentionDims& d = a.dims;
  OpRecord& r = record("attention_forward", OpKind::Attention, a.qkv.dtype);
  const int64_t bh = d.batch * d.heads;
  r.gemms.push_back({d.seq, d.seq, d.head_dim, bh, Operand::Activation, Operand::Activation});
  r.gemms.push_back({d.seq, d.head_dim, d.seq, bh, Operand::Activation, Operand::Activation});
  r.rows = bh * d.seq;
  r.cols = d.seq;
  r.elements = a.out.numel();
  r.flops = r.gemm_flops() + (kSoftmaxFlops + (d.drop.active() ? kDropoutFlops : 0)) *
                                 static_cast<double>(r.rows * r.cols);
  r.bytes_read = b(a.qkv) + b(d.key_lengths);
  r.bytes_written = b(a.out) + b(a.lse);
  r.detail = fmt::format("b={} s={} heads={} d={} causal={}", d.batch, d.seq, d.heads, d.head_dim,
                         d.causal);
}

void TraceBackend::attention_backward(const AttentionBwd& a) {
  const AttentionDims& d = a.dims;
  OpRecord& r = record("attention_backward", OpKind::Attention, a.qkv.dtype);
  const int64_t bh = d.batch * d.heads;
  const int64_t s = d.seq, hd = d.head_dim;
  r.gemms.push_back({s, hd, s, bh, Operand::Activation, Operand::Gradient});  // dV = Pᵀ dO
  r.gemms.push_back({s, s, hd, bh, Operand::Gradient, Operand::Activation});  // dP = dO Vᵀ
  r.gemms.push_back({s, hd, s, bh, Operand::Gradient, Operand::Activation});  // dQ = dS K
  r.gemms.push_back({s, hd, s, bh, Operand::Gradient, Operand::Activation});  // dK = dSᵀ Q
  r.rows = bh * s;
  r.cols = s;
  r.elements = a.d_qkv.numel();
  r.flops = r.gemm_flops() + (kSoftmaxFlops + (d.drop.active() ? kDropoutFlops : 0)) *
                                 static_cast<double>(r.rows * r.cols);
  r.bytes_read = b(a.qkv) + b(a.out) + b(a.d_out) + b(a.lse) + b(d.key_lengths);
  r.bytes_written = b(a.d_qkv);
  r.detail = fmt::format("b={} s={} heads={} d={} causal={}", d.batch, s, d.heads, hd, d.causal);
}

void TraceBackend::embedding_forward(const EmbeddingFwd& a) {
  OpRecord& r = record("embedding_forward", OpKind::Embedding, a.out.dtype);
  r.rows = a.out.rows();
  r.cols = a.out.cols();
  r.elements = a.out.numel();
  r.flops = (a.pos.defined() ? 1.0 : 0.0) * n(a.out);
  r.bytes_read = b(a.ids) + b(a.out) * (a.pos.defined() ? 2.0 : 1.0);
  r.bytes_written = b(a.out);
  r.detail = fmt::format("table{} rows={}", a.table.shape.str(), a.out.rows());
}

void TraceBackend::embedding_backward(const EmbeddingBwd& a) {
  OpRecord& r = record("embedding_backward", OpKind::Embedding, a.d_out.dtype);
  r.rows = a.d_out.rows();
  r.cols = a.d_out.cols();
  r.elements = a.d_out.numel();
  r.flops = (a.d_pos.defined() ? 2.0 : 1.0) * n(a.d_out);
  r.bytes_read = b(a.ids) + b(a.d_out);
  r.bytes_written = static_cast<double>(a.d_out.numel()) * 4.0 * (a.d_pos.defined() ? 2 : 1);
  r.detail = fmt::format("table{} rows={}", a.d_table.shape.str(), a.d_out.rows());
}

void TraceBackend::pool_forward(const PoolFwd& a) {
  OpRecord& r = record("pool_forward", OpKind::Pooling, a.x.dtype);
  r.elements = a.out.numel();
  r.flops = a.mode == Pooling::Mean ? n(a.x) : 0.0;
  r.bytes_read = a.mode == Pooling::Mean ? b(a.x) : b(a.out);
  r.bytes_written = b(a.out);
}

void TraceBackend::pool_backward(const PoolBwd& a) {
  OpRecord& r = record("pool_backward", OpKind::Pooling, a.d_out.dtype);
  r.elements = a.d_x.numel();
  r.flops = a.mode == Pooling::Mean ? n(a.d_x) : 0.0;
  r.bytes_read = b(a.d_out) + (a.mode == Pooling::Mean ? b(a.d_x) : b(a.d_out));
  r.bytes_written = a.mode == Pooling::Mean ? b(a.d_x) : b(a.d_out);
}

void TraceBackend::cross_entropy(const CrossEntropy& a) {
  OpRecord& r = record("cross_entropy", OpKind::Loss, a.logits.dtype);
  r.rows = a.logits.rows();
  r.cols = a.logits.cols();
  r.elements = a.logits.numel();
  r.flops = (kSoftmaxFlops + (a.d_logits.defined() ? 2.0 : 0.0)) * n(a.logits);
  r.bytes_read = b(a.logits) + b(a.targets);
  r.bytes_written = b(a.losses) + b(a.d_logits);
}

void TraceBackend::argmax_rows(Tensor logits, Tensor out) {
  OpRecord& r = record("argmax_rows", OpKind::Reduction, logits.dtype);
  r.rows = logits.rows();
  r.cols = logits.cols();
  r.flops = n(logits);
  r.bytes_read = b(logits);
  r.bytes_written = b(out);
}

void TraceBackend::sum(Tensor x, Tensor out) {
  OpRecord& r = record("sum", OpKind::Reduction, x.dtype);
  r.flops = n(x);
  r.bytes_read = b(x);
  r.bytes_written = b(out);
}

void TraceBackend::sum_squares(Tensor x, Tensor out) {
  OpRecord& r = record("sum_squares", OpKind::Reduction, x.dtype);
  r.flops = 2 * n(x);
  r.bytes_read = b(x);
  r.bytes_written = b(out);
}

void TraceBackend::adamw_step(const AdamWStep& a) {
  optimizer_record(record("adamw_step", OpKind::Optimizer, DType::F32), a.t, 4, 3, 16);
}

void TraceBackend::adan_step(const AdanStep& a) {
  optimizer_record(record("adan_step", OpKind::Optimizer, DType::F32), a.t, 6, 5, 28);
}

void TraceBackend::sgd_step(const SgdStep& a) {
  optimizer_record(record("sgd_step", OpKind::Optimizer, DType::F32), a.t, 3, 2, 5);
}

void TraceBackend::loss_scale_update(const LossScaleUpdate& a) {
  OpRecord& r = record("loss_scale_update", OpKind::Optimizer, DType::F32);
  r.elements = 1;
  r.bytes_read = b(a.state) + b(a.grad_norm_sq);
  r.bytes_written = b(a.state);
}

}  // namespace hwt
