// The norm ops with a true width (rows stored padded, model.hidden_multiple): they normalise over
// the first `width` columns and write zeros after them. On the CPU, padded rows give exactly what
// the unpadded rows give, and the statistics match a direct double-precision reference; on the
// GPU, every op matches the CPU in every dtype, on the register-cached, uncached and unvectorised
// paths.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "backend/cpu/cpu_backend.h"
#include "cuda_test_util.h"
#include "test_util.h"

namespace hwt {
namespace {

using test::randn;
using test::rel_err;
using Vec = std::vector<float>;

// Rows of `width` values from `v`, stored `cols` wide with zero padding, and back.
Vec pad(const Vec& v, int64_t rows, int64_t width, int64_t cols) {
  Vec out(static_cast<size_t>(rows * cols), 0.0f);
  for (int64_t i = 0; i < rows; ++i)
    std::copy_n(v.begin() + i * width, width, out.begin() + i * cols);
  return out;
}
Vec unpad(const Vec& v, int64_t rows, int64_t width, int64_t cols) {
  Vec out(static_cast<size_t>(rows * width));
  for (int64_t i = 0; i < rows; ++i)
    std::copy_n(v.begin() + i * cols, width, out.begin() + i * width);
  return out;
}
// Whether every padding column of `v` is exactly zero.
bool zero_padding(const Vec& v, int64_t rows, int64_t width, int64_t cols) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = width; j < cols; ++j)
      if (v[static_cast<size_t>(i * cols + j)] != 0.0f) return false;
  return true;
}

// How a test makes and reads tensors on one backend.
struct Pool {
  std::function<Tensor(Shape, const Vec&)> act, f32;
  std::function<Tensor(Shape)> poisoned_act, poisoned_f32;
  std::function<Vec(Tensor)> read;
};

// Inputs of all four ops, rows `width` wide (gamma and beta: one row).
struct NormInputs {
  Vec x, residual, gamma, beta, dy, dx0, d_sum;
};

NormInputs random_inputs(int64_t rows, int64_t width, uint64_t seed,
                         const std::function<Vec(const Vec&)>& round) {
  const int64_t n = rows * width;
  return {round(randn(n, seed, 2.0f)),   round(randn(n, seed + 1)), round(randn(width, seed + 2)),
          round(randn(width, seed + 3)), round(randn(n, seed + 4)), round(randn(n, seed + 5)),
          round(randn(n, seed + 6))};
}

struct NormOutputs {
  Vec y, mean, rstd, dx, dx_acc, dgamma, dbeta;            // layernorm
  Vec sum, ry, rmean, rrstd, d_res, d_x, rdgamma, rdbeta;  // residual + layernorm
};

// Runs layernorm forward and backward (dx written, and accumulated onto dx0) and residual
// forward and backward with a layernorm, on rows stored `cols` wide of which `width` are data
// (width == cols: the ops' default, no width given).
NormOutputs run_norm_ops(Backend& be, const Pool& p, const NormInputs& in, int64_t rows,
                         int64_t width, int64_t cols, const Dropout& drop) {
  const int64_t w = width == cols ? 0 : width;
  auto rows_of = [&](const Vec& v) { return p.act({rows, cols}, pad(v, rows, width, cols)); };
  auto row_of = [&](const Vec& v) { return p.act({cols}, pad(v, 1, width, cols)); };
  auto grads = [&]() {
    return p.f32({cols}, pad(Vec(static_cast<size_t>(width), 0.5f), 1, width, cols));
  };
  NormOutputs o;
  const Tensor x = rows_of(in.x), g = row_of(in.gamma), b = row_of(in.beta);
  LayerNormFwd f{
      x,     g, b, p.poisoned_act({rows, cols}), p.poisoned_f32({rows}), p.poisoned_f32({rows}),
      1e-5f, w};
  be.layernorm_forward(f);
  o.y = p.read(f.y);
  o.mean = p.read(f.mean);
  o.rstd = p.read(f.rstd);
  for (bool acc : {false, true}) {
    LayerNormBwd l{x,
                   g,
                   f.mean,
                   f.rstd,
                   rows_of(in.dy),
                   acc ? rows_of(in.dx0) : p.poisoned_act({rows, cols}),
                   grads(),
                   grads(),
                   acc,
                   w};
    be.layernorm_backward(l);
    (acc ? o.dx_acc : o.dx) = p.read(l.dx);
    o.dgamma = p.read(l.dgamma);
    o.dbeta = p.read(l.dbeta);
  }
  ResidualFwd r;
  r.x = x;
  r.residual = rows_of(in.residual);
  r.sum = p.poisoned_act({rows, cols});
  r.drop = drop;
  r.gamma = g;
  r.beta = b;
  r.y = p.poisoned_act({rows, cols});
  r.mean = p.poisoned_f32({rows});
  r.rstd = p.poisoned_f32({rows});
  r.width = w;
  be.residual_forward(r);
  o.sum = p.read(r.sum);
  o.ry = p.read(r.y);
  o.rmean = p.read(r.mean);
  o.rrstd = p.read(r.rstd);
  ResidualBwd rb;
  rb.d_sum = rows_of(in.d_sum);
  rb.d_y = rows_of(in.dy);
  rb.sum = r.sum;
  rb.gamma = g;
  rb.mean = r.mean;
  rb.rstd = r.rstd;
  rb.drop = drop;
  rb.d_x = p.poisoned_act({rows, cols});
  rb.d_residual = p.poisoned_act({rows, cols});
  rb.d_gamma = grads();
  rb.d_beta = grads();
  rb.width = w;
  be.residual_backward(rb);
  o.d_res = p.read(rb.d_residual);
  o.d_x = p.read(rb.d_x);
  o.rdgamma = p.read(rb.d_gamma);
  o.rdbeta = p.read(rb.d_beta);
  return o;
}

// Every output of rows `cols` wide, and the statistics, each with its name.
std::vector<std::pair<const char*, const Vec*>> row_outputs(const NormOutputs& o) {
  return {{"y", &o.y},   {"dx", &o.dx},       {"dx acc", &o.dx_acc}, {"sum", &o.sum},
          {"ry", &o.ry}, {"d_res", &o.d_res}, {"d_x", &o.d_x}};
}
std::vector<std::pair<const char*, const Vec*>> param_outputs(const NormOutputs& o) {
  return {
      {"dgamma", &o.dgamma}, {"dbeta", &o.dbeta}, {"rdgamma", &o.rdgamma}, {"rdbeta", &o.rdbeta}};
}

Pool cpu_pool(test::TensorPool& cp) {
  return {[&](Shape s, const Vec& v) { return cp.f32(s, v); },
          [&](Shape s, const Vec& v) { return cp.f32(s, v); },
          [&](Shape s) { return cp.poisoned(s); }, [&](Shape s) { return cp.poisoned(s); },
          [&](Tensor t) { return cp.read(t); }};
}

// Rows padded from 37 to 40 and to 64 columns give, in their first 37 columns, exactly what
// unpadded rows give (the same arithmetic), and zeros after them.
TEST(NormWidth, PaddedRowsGiveTheUnpaddedResultsOnTheCpu) {
  CpuBackend cpu(2);
  test::TensorPool cp(cpu);
  const Pool p = cpu_pool(cp);
  const int64_t rows = 9, width = 37;
  const NormInputs in = random_inputs(rows, width, 7, [](const Vec& v) { return v; });
  const NormOutputs want = run_norm_ops(cpu, p, in, rows, width, width, Dropout{});
  for (int64_t cols : {40, 64}) {
    SCOPED_TRACE(cols);
    const NormOutputs got = run_norm_ops(cpu, p, in, rows, width, cols, Dropout{});
    const auto got_rows = row_outputs(got), want_rows = row_outputs(want);
    for (size_t k = 0; k < got_rows.size(); ++k) {
      EXPECT_EQ(unpad(*got_rows[k].second, rows, width, cols), *want_rows[k].second)
          << got_rows[k].first;
      EXPECT_TRUE(zero_padding(*got_rows[k].second, rows, width, cols)) << got_rows[k].first;
    }
    const auto got_params = param_outputs(got), want_params = param_outputs(want);
    for (size_t k = 0; k < got_params.size(); ++k) {
      EXPECT_EQ(unpad(*got_params[k].second, 1, width, cols), *want_params[k].second)
          << got_params[k].first;
      EXPECT_TRUE(zero_padding(*got_params[k].second, 1, width, cols)) << got_params[k].first;
    }
    EXPECT_EQ(got.mean, want.mean);
    EXPECT_EQ(got.rstd, want.rstd);
    EXPECT_EQ(got.rmean, want.rmean);
    EXPECT_EQ(got.rrstd, want.rrstd);
    // The statistics are those of the true width, computed directly (over the stored width the
    // mean would be 37/40 of it and rstd larger).
    for (int64_t i = 0; i < rows; ++i) {
      double s = 0, q = 0;
      for (int64_t j = 0; j < width; ++j) s += in.x[static_cast<size_t>(i * width + j)];
      const double mean = s / width;
      for (int64_t j = 0; j < width; ++j) {
        const double d = in.x[static_cast<size_t>(i * width + j)] - mean;
        q += d * d;
      }
      EXPECT_NEAR(got.mean[static_cast<size_t>(i)], mean, 1e-6) << "row " << i;
      EXPECT_NEAR(got.rstd[static_cast<size_t>(i)], 1 / std::sqrt(q / width + 1e-5),
                  1e-5 * got.rstd[static_cast<size_t>(i)])
          << "row " << i;
    }
  }
}

class CudaNormWidth : public ::testing::TestWithParam<DType> {
 protected:
  void SetUp() override { HWT_REQUIRE_GPU(); }
  DType dt() const { return GetParam(); }
  double tol() const { return test::tol(dt(), 1e-5, 1e-2); }

  CpuBackend cpu{2};
  test::TensorPool cp{cpu};
  // On a machine without a GPU the pool sits on the CPU backend, unused (the tests skip).
  test::DevPool gp{test::gpu() ? test::gpu_ref() : static_cast<Backend&>(cpu), GetParam()};
};

INSTANTIATE_TEST_SUITE_P(Dtypes, CudaNormWidth,
                         ::testing::Values(DType::F32, DType::BF16, DType::F16), test::dtype_label);

// Widths as model.hidden_multiple pads them: register-cached rows (40, 1008 in bf16), uncached
// ones (1008 in f32, 2056), and rows too narrow to vectorise in 16-bit types (12).
TEST_P(CudaNormWidth, MatchesTheCpu) {
  const Pool gpu{[&](Shape s, const Vec& v) { return gp.act(s, v); },
                 [&](Shape s, const Vec& v) { return gp.f32(s, v); },
                 [&](Shape s) { return gp.poisoned_act(s); },
                 [&](Shape s) { return gp.poisoned(DType::F32, s); },
                 [&](Tensor t) { return gp.read(t); }};
  const Pool host = cpu_pool(cp);
  const std::array<std::pair<int64_t, int64_t>, 4> shapes{
      {{37, 40}, {1001, 1008}, {2049, 2056}, {9, 12}}};
  uint64_t seed = 500;
  for (const auto& [width, cols] : shapes)
    for (float drop_p : {0.0f, 0.3f}) {
      SCOPED_TRACE(::testing::Message()
                   << "width " << width << " cols " << cols << " p " << drop_p);
      const int64_t rows = 70;
      const NormInputs in =
          random_inputs(rows, width, seed += 10, [&](const Vec& v) { return gp.rounded(v); });
      const Dropout drop{drop_p, seed};
      const NormOutputs want = run_norm_ops(cpu, host, in, rows, width, cols, drop);
      const NormOutputs got = run_norm_ops(test::gpu_ref(), gpu, in, rows, width, cols, drop);
      const auto got_rows = row_outputs(got), want_rows = row_outputs(want);
      for (size_t k = 0; k < got_rows.size(); ++k) {
        EXPECT_LT(rel_err(*got_rows[k].second, *want_rows[k].second), tol()) << got_rows[k].first;
        EXPECT_TRUE(zero_padding(*got_rows[k].second, rows, width, cols)) << got_rows[k].first;
      }
      const auto got_params = param_outputs(got), want_params = param_outputs(want);
      for (size_t k = 0; k < got_params.size(); ++k)
        EXPECT_LT(rel_err(*got_params[k].second, *want_params[k].second), tol())
            << got_params[k].first;
      EXPECT_LT(rel_err(got.mean, want.mean), 1e-5);
      EXPECT_LT(rel_err(got.rstd, want.rstd), 1e-5);
      EXPECT_LT(rel_err(got.rrstd, want.rrstd), tol());
    }
}

}  // namespace
}  // namespace hwt
