// fused_linear_forward on the CPU against its definition written out in double precision: the
// norm of each row over its first `width` columns, the product, the activation or gating, and
// the residual, for every combination a decode step uses and rows stored wider than the norm.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/trace/trace_backend.h"
#include "reference_ops.h"
#include "test_util.h"

namespace hwt {
namespace {

using test::randn;
using test::rel_err;
using test::to_double;
using Vec = std::vector<double>;

constexpr double kFwdTol = 1e-5;  // fp32 op vs double reference

struct FusedCase {
  int64_t rows, k, width, n;
  bool norm;
  NormKind kind;
  Activation act;
  bool bias, residual;
};

// Rows [rows, k] whose columns from `width` on are zero, as the model stores padded widths.
std::vector<float> padded(int64_t rows, int64_t k, int64_t width, uint64_t seed, float scale) {
  std::vector<float> v = randn(rows * k, seed, scale);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = width; j < k; ++j) v[static_cast<size_t>(r * k + j)] = 0.0f;
  return v;
}

// The definition: y = residual + g(norm(x) · wᵀ + b).
Vec reference(const FusedCase& c, const Vec& x, const Vec& g, const Vec& beta, const Vec& w,
              const Vec& b, const Vec& res, double eps) {
  Vec in = x;
  if (c.norm) {
    for (int64_t r = 0; r < c.rows; ++r) {
      const double* row = x.data() + r * c.k;
      double mean = 0, var = 0;
      if (c.kind == NormKind::LayerNorm) {
        for (int64_t j = 0; j < c.width; ++j) mean += row[j];
        mean /= static_cast<double>(c.width);
      }
      for (int64_t j = 0; j < c.width; ++j) var += (row[j] - mean) * (row[j] - mean);
      const double rstd = 1 / std::sqrt(var / static_cast<double>(c.width) + eps);
      for (int64_t j = 0; j < c.k; ++j) {
        const size_t at = static_cast<size_t>(r * c.k + j);
        const double shift = c.kind == NormKind::LayerNorm ? beta[static_cast<size_t>(j)] : 0.0;
        in[at] = j < c.width ? (row[j] - mean) * rstd * g[static_cast<size_t>(j)] + shift : 0.0;
      }
    }
  }
  const bool gated = is_gated(c.act);
  const int64_t product = gated ? 2 * c.n : c.n;
  Vec y = gated ? ref::glu(ref::linear(in, w, b, c.rows, c.k, product, Activation::None), c.act,
                           c.rows, c.n)
                : ref::linear(in, w, b, c.rows, c.k, c.n, c.act);
  if (c.residual)
    for (size_t i = 0; i < y.size(); ++i) y[i] += res[i];
  return y;
}

TEST(CpuFusedLinear, MatchesItsDefinition) {
  const FusedCase cases[] = {
      {1, 24, 20, 9, true, NormKind::LayerNorm, Activation::GeluTanh, true, false},
      {3, 16, 16, 7, true, NormKind::RmsNorm, Activation::SwiGlu, false, true},
      {2, 13, 11, 5, true, NormKind::RmsNorm, Activation::GeGlu, true, true},
      {4, 10, 10, 6, false, NormKind::LayerNorm, Activation::None, true, true},
      {1, 8, 8, 3, true, NormKind::LayerNorm, Activation::None, false, false}};
  CpuBackend be{2};
  test::TensorPool pool{be};
  const float eps = 1e-5f;
  uint64_t seed = 40;
  for (const FusedCase& c : cases) {
    SCOPED_TRACE(::testing::Message()
                 << c.rows << "x" << c.k << " (width " << c.width << ") to " << c.n << " act "
                 << static_cast<int>(c.act) << " norm " << c.norm << " residual " << c.residual);
    const int64_t product = is_gated(c.act) ? 2 * c.n : c.n;
    const std::vector<float> x = padded(c.rows, c.k, c.width, ++seed, 1.5f);
    const std::vector<float> g = padded(1, c.k, c.width, ++seed, 0.5f);
    const std::vector<float> beta = padded(1, c.k, c.width, ++seed, 0.2f);
    const std::vector<float> w = randn(product * c.k, ++seed, 0.4f), b = randn(product, ++seed);
    const std::vector<float> res = randn(c.rows * c.n, ++seed);
    FusedLinearFwd a;
    a.x = pool.f32({c.rows, c.k}, x);
    a.w = pool.f32({product, c.k}, w);
    if (c.bias) a.b = pool.f32({product}, b);
    a.y = pool.poisoned({c.rows, c.n});
    if (c.norm) {
      a.gamma = pool.f32({c.k}, g);
      if (c.kind == NormKind::LayerNorm) a.beta = pool.f32({c.k}, beta);
    }
    a.eps = eps;
    a.width = c.width;
    a.kind = c.kind;
    a.act = c.act;
    if (c.residual) a.residual = pool.f32({c.rows, c.n}, res);
    be.fused_linear_forward(a);
    const Vec want = reference(c, to_double(x), to_double(g), to_double(beta), to_double(w),
                               c.bias ? to_double(b) : Vec{}, to_double(res), eps);
    EXPECT_LT(rel_err(pool.read(a.y), want), kFwdTol);
  }
}

TEST(CpuFusedLinear, RejectsDisagreeingShapes) {
  CpuBackend be{1};
  test::TensorPool pool{be};
  FusedLinearFwd a;
  a.x = pool.zeros({1, 8});
  a.w = pool.zeros({6, 8});
  a.y = pool.zeros({1, 6});
  a.act = Activation::SwiGlu;  // gated: w needs 12 rows for 6 outputs
  EXPECT_THROW(be.fused_linear_forward(a), Error);
  a.act = Activation::None;
  a.residual = a.y;  // the residual may not be the output
  EXPECT_THROW(be.fused_linear_forward(a), Error);
}

// The trace prices the fused op as one product (gated: of both halves) plus the work around it,
// with the norm's and the product's intermediates never written.
TEST(CpuFusedLinear, TraceCountsOneProductAndTheWorkAroundIt) {
  TraceBackend trace;
  const int64_t rows = 2, k = 64, n = 32;
  FusedLinearFwd a;
  a.x = Tensor{nullptr, Shape{rows, k}, DType::BF16, Device::Trace};
  a.w = Tensor{nullptr, Shape{2 * n, k}, DType::BF16, Device::Trace};
  a.y = Tensor{nullptr, Shape{rows, n}, DType::BF16, Device::Trace};
  a.residual = Tensor{nullptr, Shape{rows, n}, DType::BF16, Device::Trace};
  a.gamma = Tensor{nullptr, Shape{k}, DType::BF16, Device::Trace};
  a.kind = NormKind::RmsNorm;
  a.act = Activation::SwiGlu;
  trace.fused_linear_forward(a);
  ASSERT_EQ(trace.workload().ops.size(), 1u);
  const OpRecord& r = trace.workload().ops[0];
  ASSERT_EQ(r.gemms.size(), 1u);
  EXPECT_DOUBLE_EQ(r.gemm_flops(), 2.0 * rows * k * 2 * n);
  EXPECT_GT(r.flops, r.gemm_flops());
  EXPECT_DOUBLE_EQ(r.bytes_written, rows * n * 2.0);
  EXPECT_DOUBLE_EQ(r.bytes_read, (rows * k + 2 * n * k + k + rows * n) * 2.0);
}

}  // namespace
}  // namespace hwt
