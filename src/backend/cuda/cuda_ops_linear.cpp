// CudaBackend: every GEMM through one path, matmul: the linear ops run their products
// (backend/gemm.h) through it, and so does the GEMM timer. Row-major operands are handed to the
// column-major library transposed: row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ.
#include <fmt/format.h>

#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_check.h"
#include "backend/fp8_linear.h"
#include "backend/fused_linear.h"
#include "backend/gemm.h"
#include "core/fp8.h"

namespace hwt {

using cuda::Epilogue;
using cuda::GemmDesc;

namespace {

bool aligned16(const void* p) {
  return (reinterpret_cast<uintptr_t>(p) & 15u) == 0;
}

// The row-major product s of a's tensors, written to `out`, as cuBLASLt's column-major GEMM.
GemmDesc column_major(const GemmShape& s, const Matmul& a, void* out) {
  GemmDesc g;
  g.trans_a = s.trans_b;
  g.trans_b = s.trans_a;
  g.m = s.n;
  g.n = s.m;
  g.k = s.k;
  g.a = a.b.data;
  g.lda = s.lead_b();
  g.b = a.a.data;
  g.ldb = s.lead_a();
  g.d = out;
  g.ldd = s.lead_c();
  g.a_type = a.b.dtype;
  g.b_type = a.a.dtype;
  g.d_type = a.c.dtype;
  g.alpha = a.alpha;
  g.beta = a.beta;
  if (is_fp8(a.a.dtype)) {  // cuBLASLt's A is b: it goes with b's factor
    g.a_scale = a.b_scale_inv.as<float>();
    g.b_scale = a.a_scale_inv.as<float>();
  }
  g.batch = s.batch;
  g.stride_a = s.k * s.n;
  g.stride_b = s.m * s.k;
  g.stride_d = s.m * s.n;
  return g;
}

}  // namespace

bool CudaBackend::gemm(const GemmDesc& g) {
  if (capturing_ && gemm_->would_tune(g))
    outside_capture(fmt::format("autotuning a new GEMM shape ({}x{}x{})", g.m, g.n, g.k));
  return gemm_->run(g, launch_.stream);
}

void CudaBackend::matmul(const Matmul& a) {
  const GemmShape s = matmul_shape(a);  // and the rules of fp8 operands
  const bool fp8 = is_fp8(a.a.dtype);
  if (fp8) {
    cuda::expect_float(a.c, "c");
  } else {
    cuda::expect_float(a.a, "a");
    cuda::expect_dtype(a.b, a.a.dtype, "b");
    cuda::expect_dtype(a.c, a.c.dtype == DType::F32 ? DType::F32 : a.a.dtype, "c");
  }
  const bool act = a.act != Activation::None;
  if (act) cuda::expect_same(a.pre_act, a.c, "pre_act");
  if (a.bias.defined()) cuda::expect_dtype(a.bias, a.c.dtype, "bias");
  void* z = act ? a.pre_act.data : a.c.data;
  // One row times a weight matrix (batch-1 decode): a matrix-vector kernel reads w once.
  if (!fp8 && !s.trans_a && s.trans_b && s.batch == 1 && a.alpha == 1.0f && a.beta == 0.0f &&
      a.c.dtype == a.a.dtype && cuda::gemv_fits(a.a.dtype, s.m, s.k, a.a.data, a.b.data)) {
    cuda::GemvArgs g;
    g.dt = a.a.dtype;
    g.x = a.a.data;
    g.w = a.b.data;
    g.bias = a.bias.defined() ? a.bias.data : nullptr;
    g.y = a.c.data;
    g.pre_act = act ? a.pre_act.data : nullptr;
    g.n = s.n;
    g.k = s.k;
    g.act = a.act;
    cuda::gemv(launch_, g);
    return cuda::check_launch("matmul");
  }
  // cuBLASLt adds the bias when it can; otherwise bias_act below does.
  const bool bias_ok = a.bias.defined() && aligned16(a.bias.data) && s.batch == 1;
  // bf16/f16 GPT-style MLP: the whole of bias + tanh-GELU in the GEMM epilogue.
  if (bias_ok && a.act == Activation::GeluTanh && a.c.dtype != DType::F32) {
    GemmDesc g = column_major(s, a, a.c.data);
    g.epilogue = Epilogue::GeluAuxBias;
    g.bias = a.bias.data;
    g.aux = a.pre_act.data;
    if (gemm(g)) return cuda::check_launch("matmul");
  }
  GemmDesc g = column_major(s, a, z);
  bool bias_done = false;
  if (bias_ok) {
    g.epilogue = Epilogue::Bias;
    g.bias = a.bias.data;
    bias_done = gemm(g);
  }
  if (!bias_done) {
    g.epilogue = Epilogue::None;
    g.bias = nullptr;
    gemm(g);
  }
  cuda::bias_act(launch_, a.c.dtype, z, bias_done || !a.bias.defined() ? nullptr : a.bias.data,
                 a.c.data, s.batch * s.m, s.n, a.act);
  cuda::check_launch("matmul");
}

void CudaBackend::fp8_cast(const Fp8Cast& a) {
  cuda::expect_float(a.x, "fp8_cast x");
  cuda::Fp8CastArgs c = cuda::fp8_cast_args(a.to, a.x.rows(), a.x.cols(), "fp8_cast");
  c.x_dt = a.x.dtype;
  c.x = a.x.data;
  cuda::fp8_cast(launch_, c);
  cuda::check_launch("fp8_cast");
}

void CudaBackend::fp8_scale_update(const Fp8ScaleUpdate& a) {
  for (const Tensor* t : {&a.amax, &a.history, &a.scale, &a.scale_inv})
    cuda::expect_dtype(*t, DType::F32, "fp8_scale_update");
  cuda::Fp8ScaleUpdateArgs c;
  c.tensors = a.amax.numel();
  HWT_CHECK(a.history.shape.rank == 2 && a.history.rows() == c.tensors && a.history.cols() >= 1 &&
                a.scale.numel() == c.tensors && fp8_scale_inv_stride(a) > 0,
            "fp8_scale_update amax {}, history {}, scale {}, scale_inv {}", a.amax.str(),
            a.history.str(), a.scale.str(), a.scale_inv.str());
  c.amax = a.amax.as<float>();
  c.history = a.history.as<float>();
  c.scale = a.scale.as<float>();
  c.scale_inv = a.scale_inv.as<float>();
  c.scale_inv_stride = fp8_scale_inv_stride(a);
  c.len = a.history.cols();
  c.max_value = fp8_max(a.format);
  c.algorithm = a.algorithm;
  c.margin = a.margin;
  cuda::fp8_scale_update(launch_, c);
  cuda::check_launch("fp8_scale_update");
}

void CudaBackend::linear_forward(const LinearFwd& a) {
  cast_forward_operands(*this, a);
  matmul(linear_forward_product(a));
}

// One row (batch-1 decode): the matrix-vector kernel with the norm, gating and residual fused
// in. Otherwise the plain ops in turn, in scratch (backend/fused_linear.h).
void CudaBackend::fused_linear_forward(const FusedLinearFwd& a) {
  const size_t bytes = fused_linear_scratch_bytes(a, Device::Cuda);
  cuda::expect_float(a.x, "x");
  const DType dt = a.x.dtype;
  for (const auto& [t, name] : {std::pair{a.w, "w"},
                                {a.y, "y"},
                                {a.b, "bias"},
                                {a.gamma, "gamma"},
                                {a.beta, "beta"},
                                {a.residual, "residual"}})
    if (t.defined()) cuda::expect_dtype(t, dt, name);
  if (cuda::gemv_fits(dt, a.x.rows(), a.x.cols(), a.x.data, a.w.data)) {
    cuda::GemvArgs g;
    g.dt = dt;
    g.x = a.x.data;
    g.w = a.w.data;
    g.bias = a.b.defined() ? a.b.data : nullptr;
    g.y = a.y.data;
    g.n = a.y.cols();
    g.k = a.x.cols();
    g.act = a.act;
    if (a.gamma.defined()) {
      g.gamma = a.gamma.data;
      g.beta = a.beta.defined() ? a.beta.data : nullptr;
      g.eps = a.eps;
      g.width = norm_width(a.width, g.k);
      g.rms = a.kind == NormKind::RmsNorm;
    }
    g.residual = a.residual.defined() ? a.residual.data : nullptr;
    g.dependent = true;  // w is a parameter, which no forward kernel writes
    cuda::gemv(launch_, g);
    return cuda::check_launch("fused_linear_forward");
  }
  compose_fused_linear(*this, a, bytes ? scratch(bytes) : nullptr);
}

void CudaBackend::linear_backward(const LinearBwd& a) {
  cuda::expect_float(a.x, "x");
  cuda::expect_dtype(a.w, a.x.dtype, "w");
  cuda::expect_dtype(a.dy, a.x.dtype, "dy");
  cuda::expect_dtype(a.dw, DType::F32, "dw");
  const int64_t m = a.x.rows(), n = a.w.dim(0);
  HWT_CHECK(a.dy.rows() == m && a.dy.cols() == n, "linear backward x{} w{} dy{}", a.x.shape.str(),
            a.w.shape.str(), a.dy.shape.str());
  if (a.act != Activation::None) cuda::expect_same(a.pre_act, a.dy, "pre_act");
  float* db = nullptr;
  if (a.db.defined()) {
    cuda::expect_dtype(a.db, DType::F32, "db");
    HWT_CHECK(a.db.numel() == n, "db {} for {} outputs", a.db.str(), n);
    db = a.db.as<float>();
  }
  if (db || a.act != Activation::None) {
    float* part = db ? static_cast<float*>(scratch(cuda::bias_grad_scratch_bytes(m, n))) : nullptr;
    cuda::act_backward_bias_grad(launch_, a.dy.dtype, a.dy.data,
                                 a.act != Activation::None ? a.pre_act.data : nullptr, a.act, db, m,
                                 n, part);
  }
  if (a.dx.defined()) {
    cuda::expect_dtype(a.dx, a.x.dtype, "dx");
    cast_input_grad_operands(*this, a);
    matmul(linear_input_grad_product(a));
  }
  cast_weight_grad_operands(*this, a);
  matmul(linear_weight_grad_product(a));
  cuda::check_launch("linear_backward");
}

namespace cuda {

Fp8CastArgs fp8_cast_args(const Fp8Out& to, int64_t rows, int64_t cols, const char* op) {
  check_fp8_out(to, rows, cols, op);
  for (const Tensor* t : {&to.out, &to.out_t, &to.scale, &to.amax, &to.counts})
    if (t->defined()) expect_on_device(*t, op);
  Fp8CastArgs c;
  c.out_dt = to.dtype();
  c.out = to.out.data;
  c.out_t = to.out_t.data;
  c.rows = rows;
  c.cols = cols;
  c.scale = to.scale.as<float>();
  c.amax = to.amax.as<float>();
  c.counts = to.counts.as<int32_t>();
  return c;
}

}  // namespace cuda
}  // namespace hwt
