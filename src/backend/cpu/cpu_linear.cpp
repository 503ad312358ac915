// CpuBackend: linear layers and matmul through OpenBLAS sgemm (row-major).
#include <cblas.h>

#include <algorithm>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/gemm.h"
#include "core/activation_math.h"
#include "core/integer_math.h"

namespace hwt {
namespace {

void sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              static_cast<blasint>(m), static_cast<blasint>(n), static_cast<blasint>(k), alpha, a,
              static_cast<blasint>(lda), b, static_cast<blasint>(ldb), beta, c,
              static_cast<blasint>(ldc));
}

}  // namespace

void CpuBackend::linear_forward(const LinearFwd& a) {
  matmul(linear_forward_product(a));
}

void CpuBackend::linear_backward(const LinearBwd& a) {
  expect_f32(a.x, "x");
  expect_f32(a.w, "w");
  expect_f32(a.dy, "dy");
  const int64_t m = a.x.rows(), n = a.w.dim(0);
  float* dy = a.dy.as<float>();
  if (a.act != Activation::None) {
    expect_f32(a.pre_act, "pre_act");
    const float* z = a.pre_act.as<float>();
    const int64_t total = m * n;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < total; ++i) dy[i] *= activate_grad(a.act, z[i]);
  }
  if (a.dx.defined()) matmul(linear_input_grad_product(a));
  matmul(linear_weight_grad_product(a));
  if (a.db.defined()) {
    expect_f32(a.db, "db");
    // Column sums over fixed row chunks, combined in order: deterministic for any thread count.
    const int64_t chunks = ceil_div(m, kReduceChunk);
    std::vector<float> part(static_cast<size_t>(chunks * n), 0.0f);
#pragma omp parallel for schedule(static)
    for (int64_t c = 0; c < chunks; ++c) {
      float* p = part.data() + c * n;
      for (int64_t i = c * kReduceChunk; i < std::min(m, (c + 1) * kReduceChunk); ++i)
        for (int64_t j = 0; j < n; ++j) p[j] += dy[i * n + j];
    }
    float* db = a.db.as<float>();
    for (int64_t c = 0; c < chunks; ++c)
      for (int64_t j = 0; j < n; ++j) db[j] += part[static_cast<size_t>(c * n + j)];
  }
}

void CpuBackend::matmul(const Matmul& a) {
  expect_f32(a.a, "a");
  expect_f32(a.b, "b");
  expect_f32(a.c, "c");
  const GemmShape s = matmul_shape(a);
  const bool act = a.act != Activation::None;
  // The product lands in z (pre_act with an activation); a bias is laid into z first and the
  // product added to it.
  const Tensor z = act ? a.pre_act : a.c;
  if (act) expect_f32(z, "pre_act");
  float beta = a.beta;
  if (a.bias.defined()) {
    expect_f32(a.bias, "bias");
    const float* bias = a.bias.as<float>();
    float* zp = z.as<float>();
    const int64_t rows = s.batch * s.m;
    // Without accumulation z is not read: it may hold anything, NaN included.
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < rows; ++i) {
      float* row = zp + i * s.n;
      if (beta == 0.0f)
        std::copy(bias, bias + s.n, row);
      else
        for (int64_t j = 0; j < s.n; ++j) row[j] = beta * row[j] + bias[j];
    }
    beta = 1.0f;
  }
  const int64_t stride_a = s.m * s.k, stride_b = s.k * s.n, stride_c = s.m * s.n;
  for (int64_t i = 0; i < s.batch; ++i)
    sgemm(s.trans_a, s.trans_b, s.m, s.n, s.k, a.alpha, a.a.as<float>() + i * stride_a, a.a.cols(),
          a.b.as<float>() + i * stride_b, a.b.cols(), beta, z.as<float>() + i * stride_c, s.n);
  if (act) {
    const float* zp = z.as<float>();
    float* y = a.c.as<float>();
    const int64_t total = s.batch * stride_c;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < total; ++i) y[i] = activate(a.act, zp[i]);
  }
}

}  // namespace hwt
