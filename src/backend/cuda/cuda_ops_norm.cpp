// CudaBackend: layernorm and RMSNorm, residual add (+dropout, +norm), QK-norm and dropout.
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_check.h"

namespace hwt {

namespace {

// RMSNorm has no mean (expect_kind checks that).
void expect_stats(NormKind kind, const Tensor& mean, const Tensor& rstd, int64_t rows) {
  cuda::expect_dtype(rstd, DType::F32, "rstd");
  HWT_CHECK(rstd.numel() == rows, "norm rstd {} for {} rows", rstd.str(), rows);
  if (kind == NormKind::RmsNorm) return;
  cuda::expect_dtype(mean, DType::F32, "mean");
  HWT_CHECK(mean.numel() == rows, "layernorm mean {} for {} rows", mean.str(), rows);
}

// RMSNorm takes no beta (dbeta) and no mean; LayerNorm needs both.
void expect_kind(NormKind kind, const Tensor& beta, const Tensor& mean, const char* beta_name) {
  if (kind == NormKind::RmsNorm)
    HWT_CHECK(!beta.defined() && !mean.defined(), "rmsnorm takes no {} and no mean", beta_name);
  else
    HWT_CHECK(beta.defined() && mean.defined(), "layernorm needs {} and mean", beta_name);
}

float* data_or_null(const Tensor& t) {
  return t.defined() ? t.as<float>() : nullptr;
}

void expect_params(const Tensor& gamma, const Tensor& x, const char* what) {
  cuda::expect_dtype(gamma, x.dtype, what);
  HWT_CHECK(gamma.numel() == x.cols(), "{} {} for rows of {}", what, gamma.str(), x.str());
}

// The columns a layernorm over rows of x normalises (LayerNormFwd::width), checked.
int64_t checked_width(int64_t width, const Tensor& x) {
  const int64_t w = norm_width(width, x.cols());
  HWT_CHECK(w >= 1 && w <= x.cols(), "layernorm width {} for rows of {}", width, x.str());
  return w;
}

// The norm part of a forward launch: y = norm(x) over the first `width` columns with its
// statistics (checked).
void set_layernorm(cuda::NormFwdArgs& n, NormKind kind, const Tensor& x, const Tensor& gamma,
                   const Tensor& beta, const Tensor& y, const Tensor& mean, const Tensor& rstd,
                   int64_t width) {
  expect_kind(kind, beta, mean, "beta");
  expect_params(gamma, x, "gamma");
  if (beta.defined()) expect_params(beta, x, "beta");
  cuda::expect_same(y, x, "y");
  expect_stats(kind, mean, rstd, x.rows());
  n.rms = kind == NormKind::RmsNorm;
  n.gamma = gamma.data;
  n.beta = beta.defined() ? beta.data : nullptr;
  n.y = y.data;
  n.mean = data_or_null(mean);
  n.rstd = rstd.as<float>();
  n.width = checked_width(width, x);
}

// A backward launch through the norm of x: dx lands in `out`, dγ/dβ add up. The caller has
// checked that x, dy and out match; the parameters and statistics are checked here.
cuda::NormBwdArgs layernorm_bwd_args(NormKind kind, const Tensor& x, const Tensor& gamma,
                                     const Tensor& mean, const Tensor& rstd, const Tensor& dy,
                                     const Tensor& out, const Tensor& dgamma, const Tensor& dbeta,
                                     int64_t width) {
  expect_kind(kind, dbeta, mean, "dbeta");
  expect_params(gamma, out, "gamma");
  expect_stats(kind, mean, rstd, out.rows());
  cuda::expect_dtype(dgamma, DType::F32, "dgamma");
  if (dbeta.defined()) cuda::expect_dtype(dbeta, DType::F32, "dbeta");
  cuda::NormBwdArgs n;
  n.rms = kind == NormKind::RmsNorm;
  n.dt = out.dtype;
  n.rows = out.rows();
  n.cols = out.cols();
  n.x = x.data;
  n.gamma = gamma.data;
  n.mean = data_or_null(mean);
  n.rstd = rstd.as<float>();
  n.dy = dy.data;
  n.out = out.data;
  n.dgamma = dgamma.as<float>();
  n.dbeta = data_or_null(dbeta);
  n.width = checked_width(width, out);
  return n;
}

// A head norm launch over qkv (d_qkv in the backward), its shapes checked.
cuda::HeadNormArgs head_norm_args(const HeadNormShape& h, const Tensor& qkv, const Tensor& saved,
                                  const Tensor& rstd, const Tensor& q_gamma,
                                  const Tensor& k_gamma) {
  cuda::expect_float(qkv, "head norm qkv");
  cuda::expect_dtype(saved, qkv.dtype, "head norm saved");
  cuda::expect_dtype(q_gamma, qkv.dtype, "q_gamma");
  cuda::expect_dtype(k_gamma, qkv.dtype, "k_gamma");
  cuda::expect_dtype(rstd, DType::F32, "head norm rstd");
  const int64_t D = h.head_dim, w = h.checked_width(qkv, saved, rstd, q_gamma, k_gamma);
  HWT_CHECK(D <= cuda::kHeadNormMaxHeadDim, "head norm: head_dim {} above the CUDA kernel's {}", D,
            cuda::kHeadNormMaxHeadDim);
  cuda::HeadNormArgs n;
  n.dt = qkv.dtype;
  n.rows = qkv.rows();
  n.cols = qkv.cols();
  n.heads = h.heads;
  n.normed = h.normed();
  n.head_dim = D;
  n.width = w;
  n.eps = h.eps;
  n.qkv = qkv.data;
  n.saved = saved.data;
  n.rstd = rstd.as<float>();
  n.q_gamma = q_gamma.data;
  n.k_gamma = k_gamma.data;
  return n;
}

}  // namespace

void CudaBackend::layernorm_forward(const LayerNormFwd& a) {
  cuda::expect_float(a.x, "x");
  cuda::NormFwdArgs n;
  n.dt = a.x.dtype;
  n.rows = a.x.rows();
  n.cols = a.x.cols();
  n.x = a.x.data;
  n.eps = a.eps;
  set_layernorm(n, a.kind, a.x, a.gamma, a.beta, a.y, a.mean, a.rstd, a.width);
  cuda::norm_forward(launch_, n);
  cuda::check_launch("layernorm_forward");
}

void CudaBackend::layernorm_backward(const LayerNormBwd& a) {
  cuda::expect_float(a.x, "x");
  cuda::expect_same(a.dy, a.x, "dy");
  cuda::expect_same(a.dx, a.x, "dx");
  cuda::NormBwdArgs n = layernorm_bwd_args(a.kind, a.x, a.gamma, a.mean, a.rstd, a.dy, a.dx,
                                           a.dgamma, a.dbeta, a.width);
  n.accumulate = a.accumulate_dx;
  n.scratch =
      static_cast<float*>(scratch(cuda::norm_backward_scratch_bytes(launch_, n.rows, n.cols)));
  cuda::norm_backward(launch_, n);
  cuda::check_launch("layernorm_backward");
}

void CudaBackend::residual_forward(const ResidualFwd& a) {
  cuda::expect_float(a.x, "x");
  cuda::expect_same(a.residual, a.x, "residual");
  cuda::expect_same(a.sum, a.x, "sum");
  cuda::NormFwdArgs n;
  n.dt = a.x.dtype;
  n.rows = a.x.rows();
  n.cols = a.x.cols();
  n.x = a.x.data;
  n.residual = a.residual.data;
  n.sum = a.sum.data;
  n.drop = cuda::drop_args(a.drop);
  n.eps = a.eps;
  if (a.gamma.defined())
    set_layernorm(n, a.kind, a.x, a.gamma, a.beta, a.y, a.mean, a.rstd, a.width);
  cuda::norm_forward(launch_, n);
  cuda::check_launch("residual_forward");
}

void CudaBackend::residual_backward(const ResidualBwd& a) {
  cuda::expect_float(a.d_x, "d_x");
  cuda::expect_same(a.d_residual, a.d_x, "d_residual");
  if (a.d_sum.defined()) cuda::expect_same(a.d_sum, a.d_x, "d_sum");
  const cuda::DropArgs drop = cuda::drop_args(a.drop);
  if (!a.gamma.defined()) {
    cuda::residual_backward_plain(launch_, a.d_x.dtype, a.d_sum.defined() ? a.d_sum.data : nullptr,
                                  a.d_residual.data, a.d_x.data, a.d_x.numel(), drop);
    return cuda::check_launch("residual_backward");
  }
  cuda::expect_same(a.d_y, a.d_x, "d_y");
  cuda::expect_same(a.sum, a.d_x, "sum");
  cuda::NormBwdArgs n = layernorm_bwd_args(a.kind, a.sum, a.gamma, a.mean, a.rstd, a.d_y,
                                           a.d_residual, a.d_gamma, a.d_beta, a.width);
  n.d_sum = a.d_sum.defined() ? a.d_sum.data : nullptr;
  n.d_drop = a.d_x.data;
  n.drop = drop;
  n.scratch =
      static_cast<float*>(scratch(cuda::norm_backward_scratch_bytes(launch_, n.rows, n.cols)));
  cuda::norm_backward(launch_, n);
  cuda::check_launch("residual_backward");
}

void CudaBackend::head_norm_forward(const HeadNormFwd& a) {
  cuda::head_norm_forward(launch_,
                          head_norm_args(a.shape, a.qkv, a.saved, a.rstd, a.q_gamma, a.k_gamma));
  cuda::check_launch("head_norm_forward");
}

void CudaBackend::head_norm_backward(const HeadNormBwd& a) {
  cuda::expect_dtype(a.d_q_gamma, DType::F32, "d_q_gamma");
  cuda::expect_dtype(a.d_k_gamma, DType::F32, "d_k_gamma");
  cuda::HeadNormArgs n = head_norm_args(a.shape, a.d_qkv, a.saved, a.rstd, a.q_gamma, a.k_gamma);
  n.d_q_gamma = a.d_q_gamma.as<float>();
  n.d_k_gamma = a.d_k_gamma.as<float>();
  n.scratch = static_cast<float*>(
      scratch(cuda::head_norm_backward_scratch_bytes(launch_, n.rows, n.normed, n.head_dim)));
  cuda::head_norm_backward(launch_, n);
  cuda::check_launch("head_norm_backward");
}

void CudaBackend::dropout_forward(const DropoutFwd& a) {
  cuda::expect_float(a.x, "x");
  cuda::expect_same(a.y, a.x, "y");
  const cuda::DropArgs d = cuda::drop_args(a.drop);
  if (!d.active()) {
    if (a.y.data != a.x.data) copy({a.y, a.x});
    return;
  }
  cuda::dropout(launch_, a.x.dtype, a.x.data, a.y.data, a.x.numel(), d);
  cuda::check_launch("dropout_forward");
}

void CudaBackend::dropout_backward(const DropoutBwd& a) {
  dropout_forward(DropoutFwd{a.dy, a.dx, a.drop});
}

}  // namespace hwt
