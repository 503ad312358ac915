// CudaBackend: fused optimizer steps and loss-scale bookkeeping. The kernels take the op's
// hyper-parameters as they are (at_step filled in the bias corrections for either backend);
// clipping and loss-scale factors are read by the kernel from device memory, so no step waits
// for the GPU.
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_check.h"

namespace hwt {

cuda::OptCommon CudaBackend::optimizer_common(const OptimizerTensors& t,
                                              const GradClip& clip) const {
  cuda::expect_dtype(t.params, DType::F32, "params");
  cuda::expect_same(t.grads, t.params, "grads");
  cuda::OptCommon c;
  c.params = t.params.as<float>();
  c.grads = t.grads.as<float>();
  c.n = t.params.numel();
  c.n_decay = t.n_decay;
  if (t.params_compute.defined() && t.params_compute.data != t.params.data) {
    cuda::expect_float(t.params_compute, "params_compute");
    HWT_CHECK(t.params_compute.numel() == c.n, "compute copy {} for {} params",
              t.params_compute.str(), c.n);
    c.compute = t.params_compute.data;
    c.compute_dt = t.params_compute.dtype;
  }
  if (clip.max_norm > 0.0f || clip.loss_scale.defined()) {
    cuda::expect_dtype(clip.grad_norm_sq, DType::F32, "grad_norm_sq");
    c.norm_sq = clip.grad_norm_sq.as<float>();
    c.max_norm = clip.max_norm;
  }
  if (clip.loss_scale.defined()) {
    cuda::expect_dtype(clip.loss_scale, DType::F32, "loss_scale");
    c.loss_scale = clip.loss_scale.as<float>();
  }
  if (const GradPrune& pr = t.prune; pr.active()) {
    cuda::expect_dtype(pr.zeros, DType::I32, "DynaProp counters");
    HWT_CHECK(pr.zeros.numel() == 4 && reinterpret_cast<uintptr_t>(pr.zeros.data) % 8 == 0,
              "DynaProp counters {} must be an 8-byte aligned i32 [4]", pr.zeros.str());
    c.prune_zeros = static_cast<unsigned long long*>(pr.zeros.data);
    c.prune_tau = pr.tau;
    if (pr.linear.defined()) {
      cuda::expect_dtype(pr.linear, DType::I32, "DynaProp ranges");
      HWT_CHECK(pr.linear.numel() % 4 == 0 && reinterpret_cast<uintptr_t>(pr.linear.data) % 8 == 0,
                "DynaProp ranges {} must be an 8-byte aligned i32 [4k]", pr.linear.str());
      c.linear = static_cast<const int64_t*>(pr.linear.data);
      c.linear_pairs = pr.linear.numel() / 4;
    }
  }
  return c;
}

namespace {

void expect_state(const Tensor& s, const Tensor& params, const char* what) {
  cuda::expect_same(s, params, what);
}

}  // namespace

void CudaBackend::adamw_step(const AdamWStep& a) {
  const cuda::OptCommon c = optimizer_common(a.t, a.clip);
  expect_state(a.m, a.t.params, "m");
  expect_state(a.v, a.t.params, "v");
  cuda::adamw_step(launch_, c, a.m.as<float>(), a.v.as<float>(), a.h);
  cuda::check_launch("adamw_step");
}

void CudaBackend::adan_step(const AdanStep& a) {
  const cuda::OptCommon c = optimizer_common(a.t, a.clip);
  expect_state(a.m, a.t.params, "m");
  expect_state(a.v, a.t.params, "v");
  expect_state(a.n, a.t.params, "n");
  expect_state(a.prev_grad, a.t.params, "prev_grad");
  cuda::adan_step(launch_, c, a.m.as<float>(), a.v.as<float>(), a.n.as<float>(),
                  a.prev_grad.as<float>(), a.h);
  cuda::check_launch("adan_step");
}

void CudaBackend::sgd_step(const SgdStep& a) {
  const cuda::OptCommon c = optimizer_common(a.t, a.clip);
  float* buf = nullptr;  // no momentum, no state
  if (a.h.momentum != 0.0f) {
    expect_state(a.momentum_buf, a.t.params, "momentum_buf");
    buf = a.momentum_buf.as<float>();
  }
  cuda::sgd_step(launch_, c, buf, a.h);
  cuda::check_launch("sgd_step");
}

void CudaBackend::loss_scale_update(const LossScaleUpdate& a) {
  cuda::expect_dtype(a.state, DType::F32, "loss scale state");
  HWT_CHECK(a.state.numel() == 2, "loss scale state must hold 2 floats, got {}", a.state.str());
  cuda::expect_dtype(a.grad_norm_sq, DType::F32, "grad_norm_sq");
  cuda::loss_scale_update(launch_, a.state.as<float>(), a.grad_norm_sq.as<float>(), a.growth,
                          a.backoff, a.interval);
  cuda::check_launch("loss_scale_update");
}

}  // namespace hwt
