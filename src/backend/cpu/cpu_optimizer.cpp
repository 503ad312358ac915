// CpuBackend: AdamW, Adan and SGD over flat fp32 buffers. The formulas match
// torch.optim.AdamW / torch.optim.SGD and sail-sg/Adan (Xie et al. 2022) operation for operation.
#include <cmath>
#include <cstring>

#include "backend/cpu/cpu_backend.h"
#include "core/bf16.h"

namespace hwt {

GradPrep grad_prep(const GradClip& c) {
  GradPrep r;
  float unscale = 1.0f;
  if (c.loss_scale.defined()) {
    if (!std::isfinite(c.grad_norm_sq.as<float>()[0])) return {0.0f, true};
    unscale = 1.0f / c.loss_scale.as<float>()[0];
    r.mult = unscale;
  }
  if (c.max_norm > 0.0f) {
    const float norm = std::sqrt(c.grad_norm_sq.as<float>()[0]) * unscale;
    r.mult *= std::min(1.0f, c.max_norm / (norm + 1e-6f));
  }
  return r;
}

namespace {

// Whether element i lies in one of `ranges`' sorted, disjoint [begin, end) pairs.
bool in_ranges(const int64_t* ranges, int64_t pairs, int64_t i) {
  const int64_t* end = ranges + 2 * pairs;
  // The first pair whose end lies past i (ends are sorted too).
  int64_t lo = 0, hi = pairs;
  while (lo < hi) {
    const int64_t mid = (lo + hi) / 2;
    if (ranges[2 * mid + 1] <= i)
      lo = mid + 1;
    else
      hi = mid;
  }
  return ranges + 2 * lo < end && ranges[2 * lo] <= i;
}

// Calls update(i, g_i, decay_i) for every parameter, g_i its gradient times `mult` (unscale,
// clip) and, with t.prune, 0 where |g_i| <= tau (counted); then refreshes the compute copy.
template <class Update>
void for_each_param(const OptimizerTensors& t, float weight_decay, float mult, Update update) {
  expect_f32(t.params, "params");
  expect_f32(t.grads, "grads");
  const int64_t n = t.params.numel();
  float* p = t.params.as<float>();
  const float* g = t.grads.as<float>();
  const GradPrune& pr = t.prune;
  if (!pr.active()) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) update(i, g[i] * mult, i < t.n_decay ? weight_decay : 0.0f);
  } else {
    expect_i32(pr.zeros, "DynaProp counters");
    HWT_CHECK(pr.zeros.numel() == 4, "DynaProp counters {} must be i32 [4]", pr.zeros.str());
    if (pr.linear.defined()) {
      expect_i32(pr.linear, "DynaProp ranges");
      HWT_CHECK(pr.linear.numel() % 4 == 0, "DynaProp ranges {} must be i32 [4k]", pr.linear.str());
    }
    const auto* ranges = static_cast<const int64_t*>(pr.linear.data);
    const int64_t pairs = pr.linear.defined() ? pr.linear.numel() / 4 : 0;
    int64_t zeros = 0, linear_zeros = 0;
#pragma omp parallel for schedule(static) reduction(+ : zeros, linear_zeros)
    for (int64_t i = 0; i < n; ++i) {
      float gi = g[i] * mult;
      if (std::fabs(gi) <= pr.tau) {
        gi = 0.0f;
        (in_ranges(ranges, pairs, i) ? linear_zeros : zeros) += 1;
      }
      update(i, gi, i < t.n_decay ? weight_decay : 0.0f);
    }
    uint64_t counts[2];
    std::memcpy(counts, pr.zeros.data, sizeof counts);
    counts[0] += static_cast<uint64_t>(zeros);
    counts[1] += static_cast<uint64_t>(linear_zeros);
    std::memcpy(pr.zeros.data, counts, sizeof counts);
  }
  if (!t.params_compute.defined() || t.params_compute.data == t.params.data) return;
  HWT_CHECK(t.params_compute.dtype == DType::BF16, "cpu compute copy must be bf16");
  uint16_t* c = t.params_compute.as<uint16_t>();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) c[i] = float_to_bf16(p[i]);
}

}  // namespace

void CpuBackend::adamw_step(const AdamWStep& a) {
  const GradPrep prep = grad_prep(a.clip);
  if (prep.skip) return;
  const AdamWHyper& h = a.h;
  float *p = a.t.params.as<float>(), *m = a.m.as<float>(), *v = a.v.as<float>();
  for_each_param(a.t, h.weight_decay, prep.mult, [&](int64_t i, float g, float wd) {
    p[i] *= 1.0f - h.lr * wd;
    m[i] = h.beta1 * m[i] + (1.0f - h.beta1) * g;
    v[i] = h.beta2 * v[i] + (1.0f - h.beta2) * g * g;
    p[i] -= h.step_size * m[i] / (std::sqrt(v[i]) / h.bc2_sqrt + h.eps);
  });
}

void CpuBackend::adan_step(const AdanStep& a) {
  const GradPrep prep = grad_prep(a.clip);
  if (prep.skip) return;
  const AdanHyper& h = a.h;
  float *p = a.t.params.as<float>(), *m = a.m.as<float>(), *v = a.v.as<float>();
  float *nn = a.n.as<float>(), *prev = a.prev_grad.as<float>();
  for_each_param(a.t, h.weight_decay, prep.mult, [&](int64_t i, float g, float wd) {
    const float diff = h.first ? 0.0f : g - prev[i];  // d_1 = 0
    m[i] = h.beta1 * m[i] + (1.0f - h.beta1) * g;
    v[i] = h.beta2 * v[i] + (1.0f - h.beta2) * diff;
    const float u = g + h.beta2 * diff;
    nn[i] = h.beta3 * nn[i] + (1.0f - h.beta3) * u * u;
    const float denom = std::sqrt(nn[i]) / h.bc3_sqrt + h.eps;
    if (h.no_prox) p[i] *= 1.0f - h.lr * wd;
    p[i] -= h.step_size * m[i] / denom + h.step_size_diff * v[i] / denom;
    if (!h.no_prox) p[i] /= 1.0f + h.lr * wd;
    prev[i] = g;
  });
}

void CpuBackend::sgd_step(const SgdStep& a) {
  const GradPrep prep = grad_prep(a.clip);
  if (prep.skip) return;
  const SgdHyper& h = a.h;
  float *p = a.t.params.as<float>(), *buf = a.momentum_buf.as<float>();
  for_each_param(a.t, h.weight_decay, prep.mult, [&](int64_t i, float g, float wd) {
    float d = g + wd * p[i];
    if (h.momentum != 0.0f) {
      buf[i] = h.first ? d : h.momentum * buf[i] + d;
      d = h.nesterov ? d + h.momentum * buf[i] : buf[i];
    }
    p[i] -= h.lr * d;
  });
}

void CpuBackend::loss_scale_update(const LossScaleUpdate& a) {
  expect_f32(a.state, "loss scale state");
  expect_f32(a.grad_norm_sq, "grad_norm_sq");
  float* st = a.state.as<float>();
  if (!std::isfinite(a.grad_norm_sq.as<float>()[0])) {
    st[0] *= a.backoff;
    st[1] = 0.0f;
    return;
  }
  st[1] += 1.0f;
  if (st[1] >= static_cast<float>(a.interval)) {
    st[0] *= a.growth;
    st[1] = 0.0f;
  }
}

}  // namespace hwt
