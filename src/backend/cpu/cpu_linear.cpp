// CpuBackend: linear layers and matmul through OpenBLAS sgemm (row-major).
#include <cblas.h>

#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "core/activation_math.h"

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
  expect_f32(a.x, "x");
  expect_f32(a.w, "w");
  expect_f32(a.y, "y");
  const int64_t m = a.x.rows(), k = a.x.cols(), n = a.w.dim(0);
  HWT_CHECK(a.w.cols() == k && a.y.rows() == m && a.y.cols() == n, "linear x{} w{} y{}",
            a.x.shape.str(), a.w.shape.str(), a.y.shape.str());
  const bool act = a.act != Activation::None;
  if (act) expect_f32(a.pre_act, "pre_act");
  float* z = act ? a.pre_act.as<float>() : a.y.as<float>();
  float beta = 0.0f;
  if (a.b.defined()) {
    expect_f32(a.b, "b");
    const float* bias = a.b.as<float>();
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < m; ++i) std::copy(bias, bias + n, z + i * n);
    beta = 1.0f;
  }
  sgemm(false, true, m, n, k, 1.0f, a.x.as<float>(), k, a.w.as<float>(), k, beta, z, n);
  if (act) {
    float* y = a.y.as<float>();
    const int64_t total = m * n;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < total; ++i) y[i] = activate(a.act, z[i]);
  }
}

void CpuBackend::linear_backward(const LinearBwd& a) {
  expect_f32(a.x, "x");
  expect_f32(a.w, "w");
  expect_f32(a.dy, "dy");
  const int64_t m = a.x.rows(), k = a.x.cols(), n = a.w.dim(0);
  float* dy = a.dy.as<float>();
  if (a.act != Activation::None) {
    expect_f32(a.pre_act, "pre_act");
    const float* z = a.pre_act.as<float>();
    const int64_t total = m * n;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < total; ++i) dy[i] *= activate_grad(a.act, z[i]);
  }
  if (a.dx.defined()) {
    expect_f32(a.dx, "dx");
    sgemm(false, false, m, k, n, 1.0f, dy, n, a.w.as<float>(), k, a.accumulate_dx ? 1.0f : 0.0f,
          a.dx.as<float>(), k);
  }
  expect_f32(a.dw, "dw");
  sgemm(true, false, n, k, m, 1.0f, dy, n, a.x.as<float>(), k, 1.0f, a.dw.as<float>(), k);
  if (a.db.defined()) {
    expect_f32(a.db, "db");
    // Column sums over fixed row chunks, combined in order: deterministic for any thread count.
    const int64_t chunks = (m + kReduceChunk - 1) / kReduceChunk;
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
  const int rank = a.a.shape.rank;
  HWT_CHECK((rank == 2 || rank == 3) && a.b.shape.rank == rank && a.c.shape.rank == rank,
            "matmul ranks a{} b{} c{}", a.a.shape.str(), a.b.shape.str(), a.c.shape.str());
  const int64_t batch = rank == 3 ? a.a.dim(0) : 1;
  const int64_t ar = a.a.dim(-2), ac = a.a.dim(-1), br = a.b.dim(-2), bc = a.b.dim(-1);
  const int64_t m = a.trans_a ? ac : ar, k = a.trans_a ? ar : ac;
  const int64_t n = a.trans_b ? br : bc;
  HWT_CHECK((a.trans_b ? bc : br) == k && a.c.dim(-2) == m && a.c.dim(-1) == n,
            "matmul shapes a{} b{} c{}", a.a.shape.str(), a.b.shape.str(), a.c.shape.str());
  for (int64_t i = 0; i < batch; ++i)
    sgemm(a.trans_a, a.trans_b, m, n, k, a.alpha, a.a.as<float>() + i * ar * ac, ac,
          a.b.as<float>() + i * br * bc, bc, a.beta, a.c.as<float>() + i * m * n, n);
}

}  // namespace hwt
