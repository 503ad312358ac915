// CudaBackend: layernorm, residual add (+dropout, +layernorm) and dropout.
#include "backend/cuda/cuda_backend_impl.h"
#include "backend/cuda/cuda_check.h"

namespace hwt {

namespace {

void expect_stats(const Tensor& mean, const Tensor& rstd, int64_t rows) {
  cuda::expect_dtype(mean, DType::F32, "mean");
  cuda::expect_dtype(rstd, DType::F32, "rstd");
  HWT_CHECK(mean.numel() == rows && rstd.numel() == rows, "layernorm stats {} {} for {} rows",
            mean.str(), rstd.str(), rows);
}

void expect_params(const Tensor& gamma, const Tensor& x, const char* what) {
  cuda::expect_dtype(gamma, x.dtype, what);
  HWT_CHECK(gamma.numel() == x.cols(), "{} {} for rows of {}", what, gamma.str(), x.str());
}

}  // namespace

void CudaBackend::layernorm_forward(const LayerNormFwd& a) {
  cuda::expect_float(a.x, "x");
  cuda::expect_same(a.y, a.x, "y");
  expect_params(a.gamma, a.x, "gamma");
  expect_params(a.beta, a.x, "beta");
  expect_stats(a.mean, a.rstd, a.x.rows());
  cuda::NormFwdArgs n;
  n.dt = a.x.dtype;
  n.rows = a.x.rows();
  n.cols = a.x.cols();
  n.x = a.x.data;
  n.gamma = a.gamma.data;
  n.beta = a.beta.data;
  n.y = a.y.data;
  n.mean = a.mean.as<float>();
  n.rstd = a.rstd.as<float>();
  n.eps = a.eps;
  cuda::norm_forward(launch_, n);
  cuda::check_launch("layernorm_forward");
}

void CudaBackend::layernorm_backward(const LayerNormBwd& a) {
  cuda::expect_float(a.x, "x");
  cuda::expect_same(a.dy, a.x, "dy");
  cuda::expect_same(a.dx, a.x, "dx");
  expect_params(a.gamma, a.x, "gamma");
  expect_stats(a.mean, a.rstd, a.x.rows());
  cuda::expect_dtype(a.dgamma, DType::F32, "dgamma");
  cuda::expect_dtype(a.dbeta, DType::F32, "dbeta");
  cuda::NormBwdArgs n;
  n.dt = a.x.dtype;
  n.rows = a.x.rows();
  n.cols = a.x.cols();
  n.x = a.x.data;
  n.gamma = a.gamma.data;
  n.mean = a.mean.as<float>();
  n.rstd = a.rstd.as<float>();
  n.dy = a.dy.data;
  n.accumulate = a.accumulate_dx;
  n.out = a.dx.data;
  n.dgamma = a.dgamma.as<float>();
  n.dbeta = a.dbeta.as<float>();
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
  if (a.gamma.defined()) {
    expect_params(a.gamma, a.x, "gamma");
    expect_params(a.beta, a.x, "beta");
    cuda::expect_same(a.y, a.x, "y");
    expect_stats(a.mean, a.rstd, a.x.rows());
    n.gamma = a.gamma.data;
    n.beta = a.beta.data;
    n.y = a.y.data;
    n.mean = a.mean.as<float>();
    n.rstd = a.rstd.as<float>();
  }
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
  expect_params(a.gamma, a.d_x, "gamma");
  expect_stats(a.mean, a.rstd, a.d_x.rows());
  cuda::expect_dtype(a.d_gamma, DType::F32, "d_gamma");
  cuda::expect_dtype(a.d_beta, DType::F32, "d_beta");
  cuda::NormBwdArgs n;
  n.dt = a.d_x.dtype;
  n.rows = a.d_x.rows();
  n.cols = a.d_x.cols();
  n.x = a.sum.data;
  n.gamma = a.gamma.data;
  n.mean = a.mean.as<float>();
  n.rstd = a.rstd.as<float>();
  n.dy = a.d_y.data;
  n.d_sum = a.d_sum.defined() ? a.d_sum.data : nullptr;
  n.out = a.d_residual.data;
  n.d_drop = a.d_x.data;
  n.drop = drop;
  n.dgamma = a.d_gamma.as<float>();
  n.dbeta = a.d_beta.as<float>();
  n.scratch =
      static_cast<float*>(scratch(cuda::norm_backward_scratch_bytes(launch_, n.rows, n.cols)));
  cuda::norm_backward(launch_, n);
  cuda::check_launch("residual_backward");
}

void CudaBackend::dropout_forward(const DropoutFwd& a) {
  cuda::expect_float(a.x, "x");
  cuda::expect_same(a.y, a.x, "y");
  const cuda::DropArgs d = cuda::drop_args(a.drop);
  if (!d.active()) {
    if (a.y.data != a.x.data) copy(a.y, a.x);
    return;
  }
  cuda::dropout(launch_, a.x.dtype, a.x.data, a.y.data, a.x.numel(), d);
  cuda::check_launch("dropout_forward");
}

void CudaBackend::dropout_backward(const DropoutBwd& a) {
  dropout_forward(DropoutFwd{a.dy, a.dx, a.drop});
}

}  // namespace hwt
