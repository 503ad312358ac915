// CpuBackend: layernorm and RMSNorm, residual add (+dropout, +norm), QK-norm and dropout.
#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "core/integer_math.h"
#include "core/philox.h"

namespace hwt {
namespace {

// Normalises the first w of a row's n values: y = (x - mean) * rstd * gamma + beta (RMSNorm:
// mean 0 and no beta); the rest of y is zero (padding). Writes rstd and, for LayerNorm, mean.
void layernorm_row(NormKind kind, const float* x, const float* gamma, const float* beta, float* y,
                   int64_t n, int64_t w, float eps, float* mean_out, float* rstd_out) {
  const bool rms = kind == NormKind::RmsNorm;
  double mean = 0;
  if (!rms) {
    for (int64_t j = 0; j < w; ++j) mean += x[j];
    mean /= static_cast<double>(w);
  }
  double v = 0;
  for (int64_t j = 0; j < w; ++j) v += (x[j] - mean) * (x[j] - mean);
  const float rstd = static_cast<float>(1.0 / std::sqrt(v / static_cast<double>(w) + eps));
  const float mu = static_cast<float>(mean);
  for (int64_t j = 0; j < w; ++j) y[j] = (x[j] - mu) * rstd * gamma[j] + (rms ? 0.0f : beta[j]);
  std::fill(y + w, y + n, 0.0f);
  if (!rms) *mean_out = mu;
  *rstd_out = rstd;
}

// Gradient of one row normalised over its first w of n values. Writes (or adds, when
// accumulate) dx, zero in the padding; adds the row's contribution to dgamma / dbeta partials.
// RMSNorm (mean 0) has no mean term in dx and no dbeta.
void layernorm_row_backward(NormKind kind, const float* x, const float* gamma, float mean,
                            float rstd, const float* dy, float* dx, bool accumulate, int64_t n,
                            int64_t w, float* dgamma, float* dbeta) {
  const bool rms = kind == NormKind::RmsNorm;
  double sum_dxhat = 0, sum_dxhat_xhat = 0;
  for (int64_t j = 0; j < w; ++j) {
    const float xhat = (x[j] - mean) * rstd;
    const float dxhat = dy[j] * gamma[j];
    sum_dxhat += dxhat;
    sum_dxhat_xhat += static_cast<double>(dxhat) * xhat;
    dgamma[j] += dy[j] * xhat;
    if (!rms) dbeta[j] += dy[j];
  }
  const float a = rms ? 0.0f : static_cast<float>(sum_dxhat / static_cast<double>(w));
  const float c = static_cast<float>(sum_dxhat_xhat / static_cast<double>(w));
  for (int64_t j = 0; j < w; ++j) {
    const float xhat = (x[j] - mean) * rstd;
    const float g = rstd * (dy[j] * gamma[j] - a - xhat * c);
    dx[j] = accumulate ? dx[j] + g : g;
  }
  if (!accumulate) std::fill(dx + w, dx + n, 0.0f);
}

// Runs body(row, dgamma_partial, dbeta_partial) over all rows with per-chunk partial sums,
// then adds the partials into dgamma and dbeta (null: none) in chunk order.
template <class Body>
void rows_with_param_grads(int64_t rows, int64_t n, float* dgamma, float* dbeta, Body body) {
  const int64_t chunks = ceil_div(rows, kReduceChunk);
  std::vector<float> part(static_cast<size_t>(chunks * 2 * n), 0.0f);
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    float* pg = part.data() + c * 2 * n;
    for (int64_t i = c * kReduceChunk; i < std::min(rows, (c + 1) * kReduceChunk); ++i)
      body(i, pg, pg + n);
  }
  for (int64_t c = 0; c < chunks; ++c) {
    const float* pg = part.data() + c * 2 * n;
    for (int64_t j = 0; j < n; ++j) {
      dgamma[j] += pg[j];
      if (dbeta) dbeta[j] += pg[n + j];
    }
  }
}

float dropout_scale(const Dropout& d) {
  return d.active() ? 1.0f / (1.0f - d.p) : 1.0f;
}

// y[j] = dropout(x[j]) for the elements starting at flat index `begin` (y may alias x).
void dropout_row(const Dropout& d, uint64_t begin, const float* x, float* y, int64_t n) {
  if (!d.active()) {
    if (y != x) std::copy(x, x + n, y);
    return;
  }
  thread_local std::vector<uint8_t> keep;
  keep.resize(static_cast<size_t>(n));
  dropout_keep_range(d.seed, begin, n, d.p, keep.data());
  const float scale = dropout_scale(d);
  for (int64_t j = 0; j < n; ++j) y[j] = keep[static_cast<size_t>(j)] ? x[j] * scale : 0.0f;
}

// RMSNorm takes no beta and no mean; LayerNorm needs both.
void check_norm_kind(NormKind kind, const Tensor& beta, const Tensor& mean, const char* beta_name) {
  if (kind == NormKind::RmsNorm)
    HWT_CHECK(!beta.defined(), "rmsnorm takes no {}", beta_name);
  else
    HWT_CHECK(beta.defined() && mean.defined(), "layernorm needs {} and mean", beta_name);
}

// The row's mean for LayerNorm, 0 for RMSNorm (mean may be null).
float row_mean(const float* mean, int64_t i) {
  return mean ? mean[i] : 0.0f;
}

float* data_or_null(const Tensor& t) {
  return t.defined() ? t.as<float>() : nullptr;
}

}  // namespace

void CpuBackend::layernorm_forward(const LayerNormFwd& a) {
  expect_f32(a.x, "x");
  check_norm_kind(a.kind, a.beta, a.mean, "beta");
  const int64_t rows = a.x.rows(), n = a.x.cols(), w = norm_width(a.width, n);
  const float *x = a.x.as<float>(), *g = a.gamma.as<float>(), *b = data_or_null(a.beta);
  float *y = a.y.as<float>(), *mean = data_or_null(a.mean), *rstd = a.rstd.as<float>();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < rows; ++i)
    layernorm_row(a.kind, x + i * n, g, b, y + i * n, n, w, a.eps, mean ? mean + i : nullptr,
                  rstd + i);
}

void CpuBackend::layernorm_backward(const LayerNormBwd& a) {
  expect_f32(a.dy, "dy");
  check_norm_kind(a.kind, a.dbeta, a.mean, "dbeta");
  const int64_t rows = a.x.rows(), n = a.x.cols(), w = norm_width(a.width, n);
  const float *x = a.x.as<float>(), *g = a.gamma.as<float>(), *dy = a.dy.as<float>();
  const float *mean = data_or_null(a.mean), *rstd = a.rstd.as<float>();
  float* dx = a.dx.as<float>();
  rows_with_param_grads(
      rows, n, a.dgamma.as<float>(), data_or_null(a.dbeta), [&](int64_t i, float* pg, float* pb) {
        layernorm_row_backward(a.kind, x + i * n, g, row_mean(mean, i), rstd[i], dy + i * n,
                               dx + i * n, a.accumulate_dx, n, w, pg, pb);
      });
}

void CpuBackend::residual_forward(const ResidualFwd& a) {
  expect_f32(a.x, "x");
  expect_f32(a.residual, "residual");
  expect_f32(a.sum, "sum");
  const int64_t rows = a.x.rows(), n = a.x.cols(), w = norm_width(a.width, n);
  const float *x = a.x.as<float>(), *r = a.residual.as<float>();
  float* s = a.sum.as<float>();
  const bool ln = a.gamma.defined();
  if (ln) check_norm_kind(a.kind, a.beta, a.mean, "beta");
  float* mean = data_or_null(a.mean);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < rows; ++i) {
    dropout_row(a.drop, static_cast<uint64_t>(i * n), x + i * n, s + i * n, n);
    for (int64_t j = 0; j < n; ++j) s[i * n + j] += r[i * n + j];
    if (ln)
      layernorm_row(a.kind, s + i * n, a.gamma.as<float>(), data_or_null(a.beta),
                    a.y.as<float>() + i * n, n, w, a.eps, mean ? mean + i : nullptr,
                    a.rstd.as<float>() + i);
  }
}

void CpuBackend::residual_backward(const ResidualBwd& a) {
  expect_f32(a.d_x, "d_x");
  expect_f32(a.d_residual, "d_residual");
  const int64_t rows = a.d_x.rows(), n = a.d_x.cols(), w = norm_width(a.width, n);
  const bool ln = a.gamma.defined();
  float *dx = a.d_x.as<float>(), *dr = a.d_residual.as<float>();
  const float* ds = a.d_sum.defined() ? a.d_sum.as<float>() : nullptr;
  // Row i of dr holds the residual-stream gradient; dx gets its dropout-masked copy.
  auto finish_row = [&](int64_t i) {
    dropout_row(a.drop, static_cast<uint64_t>(i * n), dr + i * n, dx + i * n, n);
  };
  if (!ln) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < n; ++j) dr[i * n + j] = ds ? ds[i * n + j] : 0.0f;
      finish_row(i);
    }
    return;
  }
  expect_f32(a.d_y, "d_y");
  check_norm_kind(a.kind, a.d_beta, a.mean, "d_beta");
  const float *s = a.sum.as<float>(), *g = a.gamma.as<float>(), *dy = a.d_y.as<float>();
  const float *mean = data_or_null(a.mean), *rstd = a.rstd.as<float>();
  rows_with_param_grads(rows, n, a.d_gamma.as<float>(), data_or_null(a.d_beta),
                        [&](int64_t i, float* pg, float* pb) {
                          float* row = dr + i * n;
                          if (ds) {
                            if (row != ds + i * n) std::copy(ds + i * n, ds + (i + 1) * n, row);
                          }
                          layernorm_row_backward(a.kind, s + i * n, g, row_mean(mean, i), rstd[i],
                                                 dy + i * n, row, ds != nullptr, n, w, pg, pb);
                          finish_row(i);
                        });
}

namespace {

// The checked shape of a head norm over qkv: each q and k head one row of RMSNorm.
struct HeadRows {
  int64_t rows, width, heads, normed, D, w;
  // Offset in qkv of head h (q heads first, then k heads) of row r.
  int64_t at(int64_t r, int64_t h) const { return r * width + h * D; }
};

HeadRows head_rows(const HeadNormShape& h, const Tensor& qkv, const Tensor& saved,
                   const Tensor& rstd, const Tensor& q_gamma, const Tensor& k_gamma) {
  const int64_t w = h.checked_width(qkv, saved, rstd, q_gamma, k_gamma);
  return {qkv.rows(), qkv.cols(), h.heads, h.normed(), h.head_dim, w};
}

}  // namespace

void CpuBackend::head_norm_forward(const HeadNormFwd& a) {
  expect_f32(a.qkv, "qkv");
  const HeadRows hr = head_rows(a.shape, a.qkv, a.saved, a.rstd, a.q_gamma, a.k_gamma);
  float *qkv = a.qkv.as<float>(), *saved = a.saved.as<float>(), *rstd = a.rstd.as<float>();
  const float *gq = a.q_gamma.as<float>(), *gk = a.k_gamma.as<float>();
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < hr.rows; ++r)
    for (int64_t h = 0; h < hr.normed; ++h) {
      float *x = qkv + hr.at(r, h), *keep = saved + (r * hr.normed + h) * hr.D;
      std::copy(x, x + hr.D, keep);
      layernorm_row(NormKind::RmsNorm, keep, h < hr.heads ? gq : gk, nullptr, x, hr.D, hr.w,
                    a.shape.eps, nullptr, rstd + r * hr.normed + h);
    }
}

void CpuBackend::head_norm_backward(const HeadNormBwd& a) {
  expect_f32(a.d_qkv, "d_qkv");
  const HeadRows hr = head_rows(a.shape, a.d_qkv, a.saved, a.rstd, a.q_gamma, a.k_gamma);
  float* d = a.d_qkv.as<float>();
  const float *saved = a.saved.as<float>(), *rstd = a.rstd.as<float>();
  // q heads, then k heads: each kind's heads are the rows of its own gamma's gradient.
  for (const bool q : {true, false}) {
    const int64_t first = q ? 0 : hr.heads, count = q ? hr.heads : hr.normed - hr.heads;
    const float* g = (q ? a.q_gamma : a.k_gamma).as<float>();
    rows_with_param_grads(hr.rows * count, hr.D, (q ? a.d_q_gamma : a.d_k_gamma).as<float>(),
                          nullptr, [&](int64_t i, float* pg, float* pb) {
                            const int64_t r = i / count, h = first + i % count;
                            const int64_t k = r * hr.normed + h;
                            float* dy = d + hr.at(r, h);
                            layernorm_row_backward(NormKind::RmsNorm, saved + k * hr.D, g, 0.0f,
                                                   rstd[k], dy, dy, false, hr.D, hr.w, pg, pb);
                          });
  }
}

void CpuBackend::dropout_forward(const DropoutFwd& a) {
  expect_f32(a.x, "x");
  const int64_t n = a.x.numel();
  const float* x = a.x.as<float>();
  float* y = a.y.as<float>();
  constexpr int64_t kBlock = 4096;
#pragma omp parallel for schedule(static)
  for (int64_t b = 0; b < n; b += kBlock)
    dropout_row(a.drop, static_cast<uint64_t>(b), x + b, y + b, std::min(kBlock, n - b));
}

void CpuBackend::dropout_backward(const DropoutBwd& a) {
  dropout_forward(DropoutFwd{a.dy, a.dx, a.drop});
}

}  // namespace hwt
