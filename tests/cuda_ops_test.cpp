// Every CUDA op against the CPU reference on fresh random inputs, in f32, bf16 and f16.
// Outputs are poisoned (NaN) before each run; the CPU runs in f32 on the inputs rounded to the
// dtype under test, so the comparison measures the op, not the input rounding.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <memory>
#include <utility>

#include "backend/cpu/cpu_backend.h"
#include "core/bf16.h"
#include "cuda_test_util.h"
#include "test_util.h"

namespace hwt {
namespace {

using test::randn;
using test::rel_err;
using Vec = std::vector<float>;

struct LinCase {
  int64_t m, k, n;
  Activation act;
  bool bias, accumulate;
};

class CudaOps : public ::testing::TestWithParam<DType> {
 protected:
  void SetUp() override { HWT_REQUIRE_GPU(); }
  DType dt() const { return GetParam(); }
  double tol(double f32 = 1e-5, double low = 1e-2) const { return test::tol(dt(), f32, low); }

  CpuBackend cpu{2};
  test::TensorPool cp{cpu};
  // On a machine without a GPU the pool sits on the CPU backend, unused (the tests skip).
  test::DevPool gp{test::gpu() ? test::gpu_ref() : static_cast<Backend&>(cpu), GetParam()};
  Backend& be() { return test::gpu_ref(); }
  // Host data as the dtype under test rounds it.
  Vec r(const Vec& v) { return gp.rounded(v); }
  // The forward of case c on the CPU (the reference) and on the GPU, from the same inputs.
  std::pair<LinearFwd, LinearFwd> linear_forwards(const LinCase& c, const Vec& x, const Vec& w,
                                                  const Vec& b) {
    const bool act = c.act != Activation::None;
    LinearFwd cf{cp.f32({c.m, c.k}, x),
                 cp.f32({c.n, c.k}, w),
                 c.bias ? cp.f32({c.n}, b) : Tensor{},
                 cp.poisoned({c.m, c.n}),
                 c.act,
                 act ? cp.poisoned({c.m, c.n}) : Tensor{}};
    cpu.linear_forward(cf);
    LinearFwd gf{gp.act({c.m, c.k}, x),
                 gp.act({c.n, c.k}, w),
                 c.bias ? gp.act({c.n}, b) : Tensor{},
                 gp.poisoned_act({c.m, c.n}),
                 c.act,
                 act ? gp.poisoned_act({c.m, c.n}) : Tensor{}};
    be().linear_forward(gf);
    return {cf, gf};
  }
};

INSTANTIATE_TEST_SUITE_P(Dtypes, CudaOps, ::testing::Values(DType::F32, DType::BF16, DType::F16),
                         test::dtype_label);

TEST_P(CudaOps, ConvertAndFill) {
  const int64_t n = 1027;
  const Vec x = randn(n, 1, 3.0f);
  const Tensor t = gp.act({n}, x);
  const Vec back = gp.read(t);
  if (dt() == DType::BF16) {
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(back[static_cast<size_t>(i)],
                bf16_to_float(float_to_bf16(x[static_cast<size_t>(i)])));
  }
  EXPECT_LT(rel_err(back, x), tol(1e-7, 5e-3));
  be().fill({t, 1.5f});
  for (float v : gp.read(t)) ASSERT_EQ(v, 1.5f);
}

TEST_P(CudaOps, LinearForwardBackward) {
  const LinCase cases[] = {{64, 96, 80, Activation::None, true, false},
                           {64, 96, 80, Activation::GeluTanh, true, true},
                           {64, 96, 80, Activation::Gelu, true, false},
                           {48, 40, 32, Activation::Relu, true, false},
                           {48, 40, 32, Activation::GeluTanh, false, false},
                           {5, 7, 6, Activation::Gelu, true, true},
                           {5, 7, 6, Activation::None, false, true}};
  uint64_t seed = 100;
  for (const LinCase& c : cases) {
    SCOPED_TRACE(::testing::Message() << c.m << "x" << c.k << "x" << c.n << " act "
                                      << static_cast<int>(c.act) << " bias " << c.bias);
    const bool act = c.act != Activation::None;
    const Vec x = r(randn(c.m * c.k, ++seed)), w = r(randn(c.n * c.k, ++seed, 0.3f));
    const Vec b = r(randn(c.n, ++seed)), dy = r(randn(c.m * c.n, ++seed));
    const Vec dx0 = r(randn(c.m * c.k, ++seed)), dw0 = randn(c.n * c.k, ++seed);
    const Vec db0 = randn(c.n, ++seed);
    const auto [cf, gf] = linear_forwards(c, x, w, b);
    // CPU reference.
    LinearBwd cb{cf.x,
                 cf.w,
                 cp.f32({c.m, c.n}, dy),
                 cf.pre_act,
                 c.act,
                 c.accumulate ? cp.f32({c.m, c.k}, dx0) : cp.poisoned({c.m, c.k}),
                 cp.f32({c.n, c.k}, dw0),
                 c.bias ? cp.f32({c.n}, db0) : Tensor{},
                 c.accumulate};
    cpu.linear_backward(cb);
    // GPU.
    LinearBwd gb{gf.x,
                 gf.w,
                 gp.act({c.m, c.n}, dy),
                 gf.pre_act,
                 c.act,
                 c.accumulate ? gp.act({c.m, c.k}, dx0) : gp.poisoned_act({c.m, c.k}),
                 gp.f32({c.n, c.k}, dw0),
                 c.bias ? gp.f32({c.n}, db0) : Tensor{},
                 c.accumulate};
    be().linear_backward(gb);
    EXPECT_LT(rel_err(gp.read(gf.y), cp.read(cf.y)), tol()) << "y";
    if (act) {
      EXPECT_LT(rel_err(gp.read(gf.pre_act), cp.read(cf.pre_act)), tol()) << "pre_act";
      EXPECT_LT(rel_err(gp.read(gb.dy), cp.read(cb.dy)), tol()) << "dy (pre-activation grad)";
    }
    EXPECT_LT(rel_err(gp.read(gb.dx), cp.read(cb.dx)), tol()) << "dx";
    EXPECT_LT(rel_err(gp.read(gb.dw), cp.read(cb.dw)), tol()) << "dw";
    if (c.bias) {
      EXPECT_LT(rel_err(gp.read(gb.db), cp.read(cb.db)), tol()) << "db";
    }
  }
}

// A batch-1 decode step's linear layers: one row runs the matrix-vector kernel (cuda_gemv.cu),
// at column counts that leave a warp's four columns or a block's last warps partly empty and
// rows of w of one warp pass (256 bf16 elements) or several, with a remainder, up to the
// longest it serves (4096), with k split over a block's warps (few columns, k of whole chunks
// per warp) and not. The others fall back to cuBLASLt: rows of w that are not whole 16-byte
// chunks, longer rows, and more than one row.
TEST_P(CudaOps, FewRowLinearForward) {
  const LinCase cases[] = {{1, 64, 5, Activation::None, true, false},
                           {1, 768, 771, Activation::Gelu, true, false},
                           {1, 3072, 770, Activation::None, true, false},
                           {1, 776, 300, Activation::GeluTanh, true, false},
                           {1, 8, 13, Activation::Gelu, false, false},
                           {1, 264, 37, Activation::Relu, true, false},
                           {1, 4096, 9, Activation::None, false, false},
                           {1, 4104, 17, Activation::Relu, true, false},
                           {1, 7, 6, Activation::Gelu, true, false},
                           {3, 264, 37, Activation::Gelu, true, false},
                           {8, 96, 64, Activation::GeluTanh, false, false}};
  uint64_t seed = 300;
  for (const LinCase& c : cases) {
    SCOPED_TRACE(::testing::Message() << c.m << "x" << c.k << "x" << c.n << " act "
                                      << static_cast<int>(c.act) << " bias " << c.bias);
    const bool act = c.act != Activation::None;
    const Vec x = r(randn(c.m * c.k, ++seed)), w = r(randn(c.n * c.k, ++seed, 0.3f));
    const Vec b = r(randn(c.n, ++seed));
    const auto [cf, gf] = linear_forwards(c, x, w, b);
    EXPECT_LT(rel_err(gp.read(gf.y), cp.read(cf.y)), tol()) << "y";
    if (act) {
      EXPECT_LT(rel_err(gp.read(gf.pre_act), cp.read(cf.pre_act)), tol()) << "pre_act";
    }
  }
}

// fused_linear_forward: one row runs the matrix-vector kernel with the norm, the gating and the
// residual inside it, k split over a block's warps or not; three rows run the plain ops in
// turn. Against the CPU's composition, with rows stored wider than the norm's width (zero
// padding), and each part on and off. The GPU rounds the norm's output and the gate and up
// halves to the dtype as the plain ops store them; tol() covers that rounding.
TEST_P(CudaOps, FusedLinearForward) {
  struct Case {
    int64_t m, k, width, n;
    bool norm;
    NormKind kind;
    Activation act;
    bool bias, residual;
  };
  const Case cases[] = {
      {1, 776, 770, 300, true, NormKind::LayerNorm, Activation::GeluTanh, true, false},
      {1, 768, 768, 2304, true, NormKind::LayerNorm, Activation::None, true, false},
      {1, 576, 576, 771, true, NormKind::RmsNorm, Activation::SwiGlu, false, false},
      {1, 3072, 3072, 770, false, NormKind::LayerNorm, Activation::None, true, true},
      {1, 64, 60, 5, true, NormKind::RmsNorm, Activation::GeGlu, true, true},
      {3, 264, 260, 37, true, NormKind::LayerNorm, Activation::SwiGlu, true, true},
      {3, 96, 96, 64, true, NormKind::RmsNorm, Activation::Gelu, false, true}};
  uint64_t seed = 700;
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message()
                 << c.m << "x" << c.k << " (width " << c.width << ") to " << c.n << " act "
                 << static_cast<int>(c.act) << " norm " << c.norm << " residual " << c.residual);
    const int64_t product = is_gated(c.act) ? 2 * c.n : c.n;
    auto padded = [&](int64_t rows, float scale) {
      Vec v = randn(rows * c.k, ++seed, scale);
      for (int64_t row = 0; row < rows; ++row)
        for (int64_t j = c.width; j < c.k; ++j) v[static_cast<size_t>(row * c.k + j)] = 0.0f;
      return r(v);
    };
    const Vec x = padded(c.m, 1.5f), g = padded(1, 0.5f), beta = padded(1, 0.2f);
    const Vec w = r(randn(product * c.k, ++seed, 0.05f)), b = r(randn(product, ++seed));
    const Vec res = r(randn(c.m * c.n, ++seed));
    auto args = [&](auto& pool, auto put, Tensor y) {
      FusedLinearFwd a;
      a.x = put(pool, Shape{c.m, c.k}, x);
      a.w = put(pool, Shape{product, c.k}, w);
      if (c.bias) a.b = put(pool, Shape{product}, b);
      a.y = y;
      if (c.norm) {
        a.gamma = put(pool, Shape{c.k}, g);
        if (c.kind == NormKind::LayerNorm) a.beta = put(pool, Shape{c.k}, beta);
      }
      a.width = c.width;
      a.kind = c.kind;
      a.act = c.act;
      if (c.residual) a.residual = put(pool, Shape{c.m, c.n}, res);
      return a;
    };
    const FusedLinearFwd cf = args(
        cp, [](auto& p, Shape s, const Vec& v) { return p.f32(s, v); }, cp.poisoned({c.m, c.n}));
    cpu.fused_linear_forward(cf);
    const FusedLinearFwd gf = args(
        gp, [](auto& p, Shape s, const Vec& v) { return p.act(s, v); },
        gp.poisoned_act({c.m, c.n}));
    be().fused_linear_forward(gf);
    EXPECT_LT(rel_err(gp.read(gf.y), cp.read(cf.y)), tol());
  }
}

TEST_P(CudaOps, MatmulTransposesBatchesAndScales) {
  for (int rank : {2, 3})
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        SCOPED_TRACE(::testing::Message() << "rank " << rank << " ta " << ta << " tb " << tb);
        const int64_t B = rank == 3 ? 3 : 1, M = 20, K = 24, N = 16;
        auto shape = [&](int64_t r0, int64_t c0) {
          return rank == 3 ? Shape{B, r0, c0} : Shape{r0, c0};
        };
        const Vec a = r(randn(B * M * K, 21)), b = r(randn(B * K * N, 22)),
                  c0 = r(randn(B * M * N, 23));
        const Shape sa = ta ? shape(K, M) : shape(M, K), sb = tb ? shape(N, K) : shape(K, N);
        Matmul cm{cp.f32(sa, a), cp.f32(sb, b), cp.f32(shape(M, N), c0), ta, tb, 0.5f, 2.0f};
        cpu.matmul(cm);
        Matmul gm{gp.act(sa, a), gp.act(sb, b), gp.act(shape(M, N), c0), ta, tb, 0.5f, 2.0f};
        be().matmul(gm);
        EXPECT_LT(rel_err(gp.read(gm.c), cp.read(cm.c)), tol());
      }
}

// The GEMM path every linear op and the GEMM timer share: bias and activation epilogues (fused
// by cuBLASLt where it can, else applied by a kernel), batched, and f32 outputs accumulated from
// low-precision operands as weight gradients are.
TEST_P(CudaOps, MatmulEpiloguesAndF32Accumulation) {
  for (int rank : {2, 3})
    for (Activation act : {Activation::None, Activation::Gelu, Activation::GeluTanh}) {
      SCOPED_TRACE(::testing::Message() << "rank " << rank << " act " << static_cast<int>(act));
      const int64_t B = rank == 3 ? 2 : 1, M = 48, K = 64, N = 40;
      auto shape = [&](int64_t r0, int64_t c0) {
        return rank == 3 ? Shape{B, r0, c0} : Shape{r0, c0};
      };
      const Vec a = r(randn(B * M * K, 31)), b = r(randn(B * N * K, 32)), bias = r(randn(N, 33));
      const bool with_act = act != Activation::None;
      Matmul cm{cp.f32(shape(M, K), a),
                cp.f32(shape(N, K), b),
                cp.poisoned(shape(M, N)),
                false,
                true,
                1.0f,
                0.0f,
                cp.f32({N}, bias),
                act,
                with_act ? cp.poisoned(shape(M, N)) : Tensor{}};
      cpu.matmul(cm);
      Matmul gm{gp.act(shape(M, K), a),
                gp.act(shape(N, K), b),
                gp.poisoned_act(shape(M, N)),
                false,
                true,
                1.0f,
                0.0f,
                gp.act({N}, bias),
                act,
                with_act ? gp.poisoned_act(shape(M, N)) : Tensor{}};
      be().matmul(gm);
      EXPECT_LT(rel_err(gp.read(gm.c), cp.read(cm.c)), tol()) << "c";
      if (with_act) {
        EXPECT_LT(rel_err(gp.read(gm.pre_act), cp.read(cm.pre_act)), tol()) << "pre";
      }
    }
  // dW += dyᵀ·x: operands in the dtype under test, the f32 output accumulated.
  const int64_t M = 64, N = 24, K = 40;
  const Vec dy = r(randn(M * N, 34)), x = r(randn(M * K, 35)), dw0 = randn(N * K, 36);
  Matmul cm{cp.f32({M, N}, dy), cp.f32({M, K}, x), cp.f32({N, K}, dw0), true, false, 1.0f, 1.0f};
  cpu.matmul(cm);
  Matmul gm{gp.act({M, N}, dy), gp.act({M, K}, x), gp.f32({N, K}, dw0), true, false, 1.0f, 1.0f};
  be().matmul(gm);
  EXPECT_LT(rel_err(gp.read(gm.c), cp.read(cm.c)), tol(1e-5, 2e-3)) << "f32 accumulation";
}

// An autotuning backend times candidate algorithms on a GEMM's first call: an accumulating
// output (beta != 0) must still come out as if only the real call ran, then and from the cache.
TEST_P(CudaOps, AutotunedMatmulAccumulatesOnce) {
  TrainConfig options;
  options.gemm_autotune = true;
  Backend& tuned = test::gpu_ref_with(options);
  const int64_t M = 96, K = 64, N = 80;
  const Vec a = r(randn(M * K, 24)), b = r(randn(N * K, 25)), c0 = r(randn(M * N, 26));
  Matmul cm{cp.f32({M, K}, a), cp.f32({N, K}, b), cp.f32({M, N}, c0), false, true, 0.5f, 2.0f};
  cpu.matmul(cm);
  for (int call = 0; call < 2; ++call) {
    Matmul gm{gp.act({M, K}, a), gp.act({N, K}, b), gp.act({M, N}, c0), false, true, 0.5f, 2.0f};
    be().synchronize();  // the inputs' conversions ran on the shared backend's stream
    tuned.matmul(gm);
    tuned.synchronize();
    EXPECT_LT(rel_err(gp.read(gm.c), cp.read(cm.c)), tol()) << "call " << call;
  }
}

TEST_P(CudaOps, LayerNormForwardBackward) {
  // 3 and 4 register chunks per lane (bf16); unvectorised; and more rows than the forward's
  // grid has warps on a 132-multiprocessor GPU (2112), so that every warp loops over rows.
  const std::array<std::pair<int64_t, int64_t>, 4> shapes{
      {{70, 768}, {70, 1024}, {70, 9}, {5003, 768}}};
  for (const auto& shape : shapes) {
    const int64_t R = shape.first, N = shape.second;
    SCOPED_TRACE(::testing::Message() << "rows " << R << " cols " << N);
    const Vec x = r(randn(R * N, 31, 2.0f)), g = r(randn(N, 32)), b = r(randn(N, 33));
    const Vec dy = r(randn(R * N, 34)), dx0 = r(randn(R * N, 35)), dg0 = randn(N, 36),
              db0 = randn(N, 37);
    LayerNormFwd cf{cp.f32({R, N}, x), cp.f32({N}, g),   cp.f32({N}, b), cp.poisoned({R, N}),
                    cp.poisoned({R}),  cp.poisoned({R}), 1e-5f};
    cpu.layernorm_forward(cf);
    LayerNormFwd gf{gp.act({R, N}, x),
                    gp.act({N}, g),
                    gp.act({N}, b),
                    gp.poisoned_act({R, N}),
                    gp.poisoned(DType::F32, {R}),
                    gp.poisoned(DType::F32, {R}),
                    1e-5f};
    be().layernorm_forward(gf);
    EXPECT_LT(rel_err(gp.read(gf.y), cp.read(cf.y)), tol());
    EXPECT_LT(rel_err(gp.read(gf.mean), cp.read(cf.mean)), 1e-5);
    EXPECT_LT(rel_err(gp.read(gf.rstd), cp.read(cf.rstd)), 1e-5);
    for (bool acc : {false, true}) {
      LayerNormBwd cb{cf.x,
                      cf.gamma,
                      cf.mean,
                      cf.rstd,
                      cp.f32({R, N}, dy),
                      acc ? cp.f32({R, N}, dx0) : cp.poisoned({R, N}),
                      cp.f32({N}, dg0),
                      cp.f32({N}, db0),
                      acc};
      cpu.layernorm_backward(cb);
      LayerNormBwd gb{gf.x,
                      gf.gamma,
                      gf.mean,
                      gf.rstd,
                      gp.act({R, N}, dy),
                      acc ? gp.act({R, N}, dx0) : gp.poisoned_act({R, N}),
                      gp.f32({N}, dg0),
                      gp.f32({N}, db0),
                      acc};
      be().layernorm_backward(gb);
      EXPECT_LT(rel_err(gp.read(gb.dx), cp.read(cb.dx)), tol()) << "dx acc=" << acc;
      EXPECT_LT(rel_err(gp.read(gb.dgamma), cp.read(cb.dgamma)), tol()) << "dgamma";
      EXPECT_LT(rel_err(gp.read(gb.dbeta), cp.read(cb.dbeta)), tol()) << "dbeta";
    }
  }
}

enum class Alias { None, ResidualIsDy, ResidualIsDsum };

TEST_P(CudaOps, ResidualForwardBackward) {
  uint64_t seed = 40;
  // The third shape gives every warp of the layernorm kernels several rows (see above); the
  // last is a decode step's one long row, which the plain sum cuts into shorter ones.
  const std::array<std::pair<int64_t, int64_t>, 4> shapes{
      {{37, 256}, {37, 10}, {5003, 768}, {1, 4096}}};
  for (const auto& shape : shapes)
    for (bool ln : {false, true})
      for (float p : {0.0f, 0.3f})
        for (Alias alias : {Alias::None, Alias::ResidualIsDy, Alias::ResidualIsDsum}) {
          if (alias == Alias::ResidualIsDy && !ln) continue;
          const int64_t R = shape.first, N = shape.second;
          SCOPED_TRACE(::testing::Message() << "rows " << R << " cols " << N << " ln " << ln
                                            << " p " << p << " alias " << static_cast<int>(alias));
          const Dropout drop{p, 777 + seed};
          const Vec x = r(randn(R * N, ++seed)), res = r(randn(R * N, ++seed));
          const Vec g = r(randn(N, ++seed)), b = r(randn(N, ++seed));
          const Vec ds = r(randn(R * N, ++seed)), dyv = r(randn(R * N, ++seed));
          const bool with_dsum = alias != Alias::ResidualIsDy;
          auto run = [&](Backend& bk, auto& pool, auto act, auto f32, auto poison_act,
                         auto poison_f32) {
            (void)pool;
            ResidualFwd f;
            f.x = act(Shape{R, N}, x);
            f.residual = act(Shape{R, N}, res);
            f.sum = poison_act(Shape{R, N});
            f.drop = drop;
            if (ln) {
              f.gamma = act(Shape{N}, g);
              f.beta = act(Shape{N}, b);
              f.y = poison_act(Shape{R, N});
              f.mean = poison_f32(Shape{R});
              f.rstd = poison_f32(Shape{R});
            }
            bk.residual_forward(f);
            ResidualBwd bw;
            bw.drop = drop;
            if (with_dsum) bw.d_sum = act(Shape{R, N}, ds);
            bw.d_x = poison_act(Shape{R, N});
            if (ln) {
              bw.d_y = act(Shape{R, N}, dyv);
              bw.sum = f.sum;
              bw.gamma = f.gamma;
              bw.mean = f.mean;
              bw.rstd = f.rstd;
              bw.d_gamma = f32(Shape{N}, Vec(static_cast<size_t>(N), 0.5f));
              bw.d_beta = f32(Shape{N}, Vec(static_cast<size_t>(N), -0.5f));
            }
            bw.d_residual = alias == Alias::ResidualIsDy     ? bw.d_y
                            : alias == Alias::ResidualIsDsum ? bw.d_sum
                                                             : poison_act(Shape{R, N});
            bk.residual_backward(bw);
            return std::make_pair(f, bw);
          };
          auto [cf, cb] = run(
              cpu, cp, [&](Shape s, const Vec& v) { return cp.f32(s, v); },
              [&](Shape s, const Vec& v) { return cp.f32(s, v); },
              [&](Shape s) { return cp.poisoned(s); }, [&](Shape s) { return cp.poisoned(s); });
          auto [gf, gb] = run(
              be(), gp, [&](Shape s, const Vec& v) { return gp.act(s, v); },
              [&](Shape s, const Vec& v) { return gp.f32(s, v); },
              [&](Shape s) { return gp.poisoned_act(s); },
              [&](Shape s) { return gp.poisoned(DType::F32, s); });
          EXPECT_LT(rel_err(gp.read(gf.sum), cp.read(cf.sum)), tol()) << "sum";
          if (ln) {
            EXPECT_LT(rel_err(gp.read(gf.y), cp.read(cf.y)), tol()) << "y";
            EXPECT_LT(rel_err(gp.read(gf.rstd), cp.read(cf.rstd)), tol()) << "rstd";
            EXPECT_LT(rel_err(gp.read(gb.d_gamma), cp.read(cb.d_gamma)), tol()) << "d_gamma";
            EXPECT_LT(rel_err(gp.read(gb.d_beta), cp.read(cb.d_beta)), tol()) << "d_beta";
          }
          EXPECT_LT(rel_err(gp.read(gb.d_x), cp.read(cb.d_x)), tol()) << "d_x";
          EXPECT_LT(rel_err(gp.read(gb.d_residual), cp.read(cb.d_residual)), tol()) << "d_res";
        }
}

TEST_P(CudaOps, DropoutMatchesCpuMask) {
  const int64_t n = 10001;  // not a multiple of the vector width
  const Vec x = r(randn(n, 61));
  const Dropout d{0.25f, 99};
  const Tensor cy = cp.poisoned({n}), gy = gp.poisoned_act({n});
  cpu.dropout_forward({cp.f32({n}, x), cy, d});
  be().dropout_forward({gp.act({n}, x), gy, d});
  const Vec cv = cp.read(cy), gv = gp.read(gy);
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(cv[static_cast<size_t>(i)] == 0.0f, gv[static_cast<size_t>(i)] == 0.0f) << i;
  EXPECT_LT(rel_err(gv, cv), tol(1e-7, 1e-2));
  const Tensor g = gp.act({n}, x);
  be().dropout_backward({g, g, d});  // in place
  EXPECT_EQ(gp.read(g), gv);
}

struct AttnCase {
  int64_t seq, head_dim;
  bool causal;
  std::vector<int32_t> lengths;  // empty: no key mask
  float drop;
};

// Every path of the CUDA attention against the CPU reference: the Hopper kernels (head size 64),
// the mma.sync kernels of each instantiated head size (32, 64 off Hopper, 80, 96, 128, 256), a
// size between them (40, 104: zero-filled columns), sizes whose rows are not whole 16-byte
// chunks (3, 36 in 16 bits, 125: run on zero-padded copies), the generic kernels (exact fp32),
// each causal or not, with padded keys, with dropout.
const AttnCase kAttnCases[] = {{5, 3, false, {}, 0.0f},
                               {5, 3, true, {5, 3}, 0.0f},
                               {5, 3, false, {5, 3}, 0.2f},
                               {150, 64, false, {}, 0.0f},
                               {150, 64, true, {}, 0.0f},
                               {150, 64, false, {150, 61}, 0.0f},
                               {150, 64, true, {97, 150}, 0.1f},
                               {130, 64, false, {130, 0}, 0.0f},
                               {70, 40, true, {70, 33}, 0.1f},
                               {300, 64, true, {300, 211}, 0.0f},
                               {130, 32, true, {}, 0.0f},
                               {130, 32, false, {130, 77}, 0.1f},
                               {100, 80, true, {100, 61}, 0.0f},
                               {100, 80, false, {}, 0.1f},
                               {150, 96, true, {}, 0.0f},
                               {150, 96, false, {150, 7}, 0.0f},
                               {200, 128, true, {200, 150}, 0.0f},
                               {260, 128, false, {260, 190}, 0.0f},
                               {129, 128, false, {}, 0.1f},
                               {70, 104, true, {70, 33}, 0.0f},
                               {90, 256, true, {}, 0.0f},
                               {90, 256, false, {90, 45}, 0.1f},
                               {66, 36, true, {66, 20}, 0.0f},
                               {77, 125, true, {77, 50}, 0.1f}};

class CudaAttention : public CudaOps {
 protected:
  // One case on `gpu` (the shared backend or one with other options) against the CPU.
  void check(Backend& gpu, const AttnCase& k, uint64_t seed, double tolerance) {
    SCOPED_TRACE(::testing::Message()
                 << "S " << k.seq << " D " << k.head_dim << " causal " << k.causal << " masked "
                 << !k.lengths.empty() << " p " << k.drop);
    const int64_t B = 2, H = 2, S = k.seq, D = k.head_dim;
    const Vec qkv = r(randn(B * S * 3 * H * D, seed)), dout = r(randn(B * S * H * D, seed + 1));
    AttentionDims dims{B,
                       S,
                       H,
                       D,
                       k.causal,
                       {},
                       1.0f / std::sqrt(static_cast<float>(D)),
                       Dropout{k.drop, 4242 + seed}};
    AttentionDims cdims = dims, gdims = dims;
    if (!k.lengths.empty()) {
      cdims.key_lengths = cp.i32({B}, k.lengths);
      gdims.key_lengths = gp.i32({B}, k.lengths);
    }
    AttentionFwd cf{cdims, cp.f32({B * S, 3 * H * D}, qkv), cp.poisoned({B * S, H * D}),
                    cp.poisoned({B, H, S})};
    cpu.attention_forward(cf);
    AttentionFwd gf{gdims, gp.act({B * S, 3 * H * D}, qkv), gp.poisoned_act({B * S, H * D}),
                    gp.poisoned(DType::F32, {B, H, S})};
    be().synchronize();
    gpu.attention_forward(gf);
    gpu.synchronize();
    const Vec cout = cp.read(cf.out), gout = gp.read(gf.out);
    EXPECT_LT(rel_err(gout, cout), tolerance) << "out";
    Vec clse = cp.read(cf.lse), glse = gp.read(gf.lse);
    for (size_t i = 0; i < clse.size(); ++i) {
      ASSERT_EQ(std::isinf(clse[i]), std::isinf(glse[i])) << "lse row " << i;
      if (std::isinf(clse[i])) clse[i] = glse[i] = 0.0f;
    }
    EXPECT_LT(rel_err(glse, clse), std::min(tolerance, 2e-3)) << "lse";
    // Backward from each backend's own forward output (the CPU reference sees rounded values).
    AttentionBwd cb{cdims,
                    cf.qkv,
                    cp.f32({B * S, H * D}, r(cout)),
                    cp.f32({B * S, H * D}, dout),
                    cf.lse,
                    cp.poisoned({B * S, 3 * H * D})};
    cpu.attention_backward(cb);
    AttentionBwd gb{gdims,  gf.qkv,
                    gf.out, gp.act({B * S, H * D}, dout),
                    gf.lse, gp.poisoned_act({B * S, 3 * H * D})};
    be().synchronize();
    gpu.attention_backward(gb);
    gpu.synchronize();
    const Vec cdqkv = cp.read(cb.d_qkv);
    EXPECT_LT(rel_err(gp.read(gb.d_qkv), cdqkv), tolerance) << "d_qkv";
    // The same backward with dQ added by atomics (train.deterministic_attention false).
    TrainConfig options;
    options.deterministic_attention = false;
    Backend& atomic = test::gpu_ref_with(options);
    AttentionBwd ab = gb;
    ab.d_qkv = gp.poisoned_act({B * S, 3 * H * D});
    be().synchronize();
    atomic.attention_backward(ab);
    atomic.synchronize();
    EXPECT_LT(rel_err(gp.read(ab.d_qkv), cdqkv), tolerance) << "d_qkv, dQ by atomics";
  }
};

INSTANTIATE_TEST_SUITE_P(Dtypes, CudaAttention,
                         ::testing::Values(DType::F32, DType::BF16, DType::F16), test::dtype_label);

TEST_P(CudaAttention, ForwardBackwardEveryPath) {
  uint64_t seed = 70;
  for (const AttnCase& k : kAttnCases) {
    seed += 2;
    check(be(), k, seed, tol());
  }
}

// fp32 activations under train.precision tf32: the mma.sync kernels with TF32 products (10-bit
// mantissas) up to head size 128, the exact generic kernels beyond.
TEST_P(CudaAttention, Tf32ForwardBackward) {
  if (dt() != DType::F32) GTEST_SKIP() << "fp32 activations only";
  TrainConfig options;
  options.precision = Precision::Tf32;
  Backend& tf32 = test::gpu_ref_with(options);
  uint64_t seed = 170;
  for (const AttnCase& k : kAttnCases) check(tf32, k, seed += 2, 5e-3);
}

// DynaTran's pruned forward (AttentionPrune: the generic kernels, two passes over the keys)
// against the CPU: outputs, log-sum-exp and the three counters, at head sizes of each generic
// kernel width, causal or not, with padded keys.
TEST_P(CudaAttention, PrunedForwardMatchesTheCpu) {
  struct Case {
    int64_t seq, head_dim;
    bool causal;
    std::vector<int32_t> lengths;
  };
  const Case cases[] = {{33, 16, false, {}},
                        {70, 64, true, {70, 33}},
                        {50, 80, false, {50, 20}},
                        {40, 128, true, {}},
                        {20, 256, false, {20, 0}}};
  uint64_t seed = 300;
  for (const Case& k : cases) {
    SCOPED_TRACE(::testing::Message()
                 << "S " << k.seq << " D " << k.head_dim << " causal " << k.causal);
    const int64_t B = 2, H = 2, S = k.seq, D = k.head_dim;
    const float tau = 0.02f;
    const Vec qkv = r(randn(B * S * 3 * H * D, seed += 2));
    AttentionDims dims{B, S, H, D, k.causal, {}, 1.0f / std::sqrt(static_cast<float>(D)), {}};
    AttentionDims cdims = dims, gdims = dims;
    if (!k.lengths.empty()) {
      cdims.key_lengths = cp.i32({B}, k.lengths);
      gdims.key_lengths = gp.i32({B}, k.lengths);
    }
    const Tensor ccounts = cp.i32({6}, {0, 0, 0, 0, 0, 0});
    const Tensor gcounts = gp.make(DType::I32, Shape{6});
    be().fill({gcounts, 0});
    AttentionFwd cf{cdims, cp.f32({B * S, 3 * H * D}, qkv), cp.poisoned({B * S, H * D}),
                    cp.poisoned({B, H, S}), AttentionPrune{tau, ccounts}};
    cpu.attention_forward(cf);
    AttentionFwd gf{gdims, gp.act({B * S, 3 * H * D}, qkv), gp.poisoned_act({B * S, H * D}),
                    gp.poisoned(DType::F32, {B, H, S}), AttentionPrune{tau, gcounts}};
    be().attention_forward(gf);
    be().synchronize();
    EXPECT_LT(rel_err(gp.read(gf.out), cp.read(cf.out)), tol()) << "out";
    Vec clse = cp.read(cf.lse), glse = gp.read(gf.lse);
    for (size_t i = 0; i < clse.size(); ++i) {
      ASSERT_EQ(std::isinf(clse[i]), std::isinf(glse[i])) << "lse row " << i;
      if (std::isinf(clse[i])) clse[i] = glse[i] = 0.0f;
    }
    EXPECT_LT(rel_err(glse, clse), 1e-5) << "lse";
    uint64_t want[3], got[3];
    cpu.download(want, ccounts);
    be().download(got, gcounts);
    EXPECT_EQ(got[2], want[2]) << "pairs";
    EXPECT_GT(want[1], want[2] / 4) << "tau should prune many probabilities";
    // A score or probability within rounding of tau may land on either side.
    const double slack = 2 + 1e-3 * static_cast<double>(want[2]);
    EXPECT_NEAR(static_cast<double>(got[0]), static_cast<double>(want[0]), slack) << "scores";
    EXPECT_NEAR(static_cast<double>(got[1]), static_cast<double>(want[1]), slack) << "probs";
  }
}

TEST_P(CudaOps, EmbeddingForwardBackwardDeterministic) {
  struct Case {
    int64_t vocab, h, seq, rows;
  };
  for (const Case c : {Case{7, 4, 3, 6}, Case{40, 96, 128, 1024}}) {
    SCOPED_TRACE(::testing::Message() << "vocab " << c.vocab << " h " << c.h);
    std::vector<int32_t> ids(static_cast<size_t>(c.rows));
    const Vec u = randn(c.rows, 80 + c.vocab);
    for (size_t i = 0; i < ids.size(); ++i)  // skewed: low ids repeat often
      ids[i] = static_cast<int32_t>(std::min<double>(c.vocab - 1, std::fabs(u[i]) * c.vocab / 3));
    const Vec table = r(randn(c.vocab * c.h, 81)), pos = r(randn(c.seq * c.h, 82));
    const Vec dout = r(randn(c.rows * c.h, 83)), dt0 = randn(c.vocab * c.h, 84),
              dp0 = randn(c.seq * c.h, 85);
    EmbeddingFwd cf{cp.i32({c.rows}, ids), cp.f32({c.vocab, c.h}, table), cp.f32({c.seq, c.h}, pos),
                    cp.poisoned({c.rows, c.h}), c.seq};
    cpu.embedding_forward(cf);
    EmbeddingFwd gf{gp.i32({c.rows}, ids), gp.act({c.vocab, c.h}, table), gp.act({c.seq, c.h}, pos),
                    gp.poisoned_act({c.rows, c.h}), c.seq};
    be().embedding_forward(gf);
    EXPECT_LT(rel_err(gp.read(gf.out), cp.read(cf.out)), tol());
    // Generation's decode: each row's position read from the device.
    std::vector<int32_t> positions(static_cast<size_t>(c.rows));
    for (int64_t i = 0; i < c.rows; ++i) positions[static_cast<size_t>(i)] = (i * 5 + 1) % c.seq;
    EmbeddingFwd cfp = cf, gfp = gf;
    cfp.out = cp.poisoned({c.rows, c.h});
    gfp.out = gp.poisoned_act({c.rows, c.h});
    cfp.positions = cp.i32({c.rows}, positions);
    gfp.positions = gp.i32({c.rows}, positions);
    cpu.embedding_forward(cfp);
    be().embedding_forward(gfp);
    EXPECT_LT(rel_err(gp.read(gfp.out), cp.read(cfp.out)), tol()) << "at given positions";
    EmbeddingBwd cb{cf.ids, cp.f32({c.rows, c.h}, dout), cp.f32({c.vocab, c.h}, dt0),
                    cp.f32({c.seq, c.h}, dp0), c.seq};
    cpu.embedding_backward(cb);
    const Tensor gdout = gp.act({c.rows, c.h}, dout);
    Vec first;
    for (int rep = 0; rep < 2; ++rep) {
      EmbeddingBwd gb{gf.ids, gdout, gp.f32({c.vocab, c.h}, dt0), gp.f32({c.seq, c.h}, dp0), c.seq};
      be().embedding_backward(gb);
      const Vec gt = gp.read(gb.d_table);
      EXPECT_LT(rel_err(gt, cp.read(cb.d_table)), tol(1e-6, 1e-5)) << "d_table";
      EXPECT_LT(rel_err(gp.read(gb.d_pos), cp.read(cb.d_pos)), tol(1e-6, 1e-5)) << "d_pos";
      if (rep == 0)
        first = gt;
      else
        EXPECT_EQ(gt, first) << "embedding backward is not deterministic";
    }
  }
}

TEST_P(CudaOps, TtEmbeddingForwardBackwardDeterministic) {
  // A 1200-row TTM table of 2·4·4 = 32 columns, ranks 1-4-3-1.
  const std::vector<int64_t> vocab{10, 10, 12}, hidden{2, 4, 4}, ranks{1, 4, 3, 1};
  const int64_t rows = 96, seq = 12, h = 32;
  std::vector<int32_t> ids(static_cast<size_t>(rows));
  const Vec u = randn(rows, 90);
  for (size_t i = 0; i < ids.size(); ++i)  // skewed: low ids repeat often
    ids[i] = static_cast<int32_t>(std::min<double>(1199, std::fabs(u[i]) * 300));
  std::vector<Tensor> ccores, gcores, cgrads;
  std::vector<Vec> grad0;
  for (size_t k = 0; k < vocab.size(); ++k) {
    const Shape s{ranks[k], vocab[k], hidden[k], ranks[k + 1]};
    const Vec core = r(randn(s.numel(), 91 + k));
    ccores.push_back(cp.f32(s, core));
    gcores.push_back(gp.act(s, core));
    grad0.push_back(randn(s.numel(), 95 + k));
    cgrads.push_back(cp.f32(s, grad0.back()));
  }
  const Vec pos = r(randn(seq * h, 98)), dout = r(randn(rows * h, 99)), dp0 = randn(seq * h, 100);
  TtEmbeddingFwd cf{cp.i32({rows}, ids), ccores, cp.f32({seq, h}, pos), cp.poisoned({rows, h}),
                    seq};
  cpu.tt_embedding_forward(cf);
  TtEmbeddingFwd gf{gp.i32({rows}, ids), gcores, gp.act({seq, h}, pos), gp.poisoned_act({rows, h}),
                    seq};
  be().tt_embedding_forward(gf);
  EXPECT_LT(rel_err(gp.read(gf.out), cp.read(cf.out)), tol());
  TtEmbeddingBwd cb{cf.ids, cp.f32({rows, h}, dout), ccores, cgrads, cp.f32({seq, h}, dp0), seq};
  cpu.tt_embedding_backward(cb);
  const Tensor gdout = gp.act({rows, h}, dout);
  std::vector<Vec> first;
  for (int rep = 0; rep < 2; ++rep) {
    std::vector<Tensor> ggrads;
    for (size_t k = 0; k < vocab.size(); ++k) ggrads.push_back(gp.f32(cgrads[k].shape, grad0[k]));
    TtEmbeddingBwd gb{gf.ids, gdout, gcores, ggrads, gp.f32({seq, h}, dp0), seq};
    be().tt_embedding_backward(gb);
    EXPECT_LT(rel_err(gp.read(gb.d_pos), cp.read(cb.d_pos)), tol(1e-6, 1e-5)) << "d_pos";
    for (size_t k = 0; k < vocab.size(); ++k) {
      const Vec g = gp.read(ggrads[k]);
      EXPECT_LT(rel_err(g, cp.read(cgrads[k])), tol(1e-5, 1e-2)) << "core " << k;
      if (rep == 0)
        first.push_back(g);
      else
        EXPECT_EQ(g, first[k]) << "TTM embedding backward is not deterministic";
    }
  }
}

TEST_P(CudaOps, EmbeddingReportsIdsOutsideVocabulary) {
  const Tensor out = gp.poisoned_act({1, 8});
  be().embedding_forward({gp.i32({1}, {9}), gp.act({3, 8}, randn(24, 1)), {}, out, 1});
  EXPECT_THROW(be().synchronize(), Error);
  be().synchronize();  // the error is reported once
}

TEST_P(CudaOps, PoolingForwardBackward) {
  const int64_t B = 3, S = 4;
  const std::vector<int32_t> lengths = {4, 1, 2};
  for (int64_t h : {5, 64})
    for (Pooling mode : {Pooling::First, Pooling::Mean}) {
      const Vec x = r(randn(B * S * h, 91)), dout = r(randn(B * h, 92)),
                dx0 = r(randn(B * S * h, 93));
      const Tensor co = cp.poisoned({B, h}), go = gp.poisoned_act({B, h});
      cpu.pool_forward({cp.f32({B * S, h}, x), co, cp.i32({B}, lengths), S, mode});
      be().pool_forward({gp.act({B * S, h}, x), go, gp.i32({B}, lengths), S, mode});
      EXPECT_LT(rel_err(gp.read(go), cp.read(co)), tol());
      const Tensor cdx = cp.f32({B * S, h}, dx0), gdx = gp.act({B * S, h}, dx0);
      cpu.pool_backward({cp.f32({B, h}, dout), cdx, cp.i32({B}, lengths), S, mode});
      be().pool_backward({gp.act({B, h}, dout), gdx, gp.i32({B}, lengths), S, mode});
      EXPECT_LT(rel_err(gp.read(gdx), cp.read(cdx)), tol());
    }
}

TEST_P(CudaOps, CrossEntropyInPlaceGradient) {
  struct Case {
    int64_t classes;
    std::vector<int32_t> targets;
  };
  // 300 rows of 8192 classes (the wide-row launch), every seventh target ignored (-1).
  std::vector<int32_t> many(300);
  for (size_t i = 0; i < many.size(); ++i)
    many[i] = i % 7 == 3 ? -1 : static_cast<int32_t>((i * 2731) % 8192);
  for (const Case& c :
       {Case{7, {3, -1, 0, 6, -1, 2}}, Case{50304, {5, 50303, -1, 100}}, Case{8192, many}}) {
    SCOPED_TRACE(::testing::Message() << "classes " << c.classes);
    const int64_t R = static_cast<int64_t>(c.targets.size()), C = c.classes;
    const Vec logits = r(randn(R * C, 101, 3.0f));
    const float scale = 0.25f;
    const Tensor cl = cp.f32({R, C}, logits), closs = cp.poisoned({R});
    cpu.cross_entropy({cl, cp.i32({R}, c.targets), closs, cl, scale});
    const Tensor gl = gp.act({R, C}, logits), gloss = gp.poisoned(DType::F32, {R});
    const Tensor ls = gp.f32({1}, {8.0f});  // a loss scale multiplies the gradient
    CrossEntropy ce{gl, gp.i32({R}, c.targets), gloss, gl, scale};
    ce.loss_scale = ls;
    be().cross_entropy(ce);
    EXPECT_LT(rel_err(gp.read(gloss), cp.read(closs)), tol(1e-5, 1e-3)) << "losses";
    Vec cg = cp.read(cl);
    for (float& v : cg) v *= 8.0f;
    EXPECT_LT(rel_err(gp.read(gl), cg), tol()) << "gradient";
    // Loss only (no gradient) leaves the logits untouched.
    const Tensor gl2 = gp.act({R, C}, logits);
    be().cross_entropy({gl2, gp.i32({R}, c.targets), gloss, {}, scale});
    EXPECT_EQ(gp.read(gl2), r(logits));
  }
  for (int64_t C : {7, 8192}) {  // a target past the classes is reported (both kernels)
    be().cross_entropy({gp.act({2, C}, randn(2 * C, 1)),
                        gp.i32({2}, {0, static_cast<int32_t>(C)}),
                        gp.poisoned(DType::F32, {2}),
                        {},
                        1.0f});
    EXPECT_THROW(be().synchronize(), Error) << "classes " << C;
  }
}

// A padded vocabulary: columns past `classes` are out of the softmax, get gradient 0 and are
// never the argmax; against the CPU on the same padded rows, for both row kernels.
TEST_P(CudaOps, CrossEntropyAndArgmaxIgnorePaddingColumns) {
  for (auto [C, P] : {std::pair<int64_t, int64_t>{61, 128}, {50257, 50304}}) {
    SCOPED_TRACE(::testing::Message() << C << " classes in " << P << " columns");
    const int64_t R = 6;
    const std::vector<int32_t> targets = {5, -1, static_cast<int32_t>(C - 1), 0, 3, 17};
    Vec logits = r(randn(R * P, 103, 3.0f));
    for (int64_t i = 0; i < R; ++i)
      for (int64_t j = C; j < P; ++j) logits[static_cast<size_t>(i * P + j)] = 40.0f;
    const Tensor cl = cp.f32({R, P}, logits), closs = cp.poisoned({R});
    cpu.cross_entropy({cl, cp.i32({R}, targets), closs, cl, 0.5f, {}, C});
    const Tensor gl = gp.act({R, P}, logits), gloss = gp.poisoned(DType::F32, {R});
    be().cross_entropy({gl, gp.i32({R}, targets), gloss, gl, 0.5f, {}, C});
    EXPECT_LT(rel_err(gp.read(gloss), cp.read(closs)), tol(1e-5, 1e-3)) << "losses";
    const Vec g = gp.read(gl);
    EXPECT_LT(rel_err(g, cp.read(cl)), tol()) << "gradient";
    for (int64_t i = 0; i < R; ++i)
      for (int64_t j = C; j < P; ++j) ASSERT_EQ(g[static_cast<size_t>(i * P + j)], 0.0f);
    Tensor am = gp.i32({R}, std::vector<int32_t>(static_cast<size_t>(R), -7));
    be().argmax_rows({gp.act({R, P}, logits), am, C});
    const auto got = gp.read_i32(am);
    for (int64_t i = 0; i < R; ++i) {
      const auto row = logits.begin() + i * P;
      EXPECT_EQ(got[static_cast<size_t>(i)], std::max_element(row, row + C) - row) << "row " << i;
    }
  }
}

TEST_P(CudaOps, ReductionsAndArgmax) {
  const int64_t n = 50001;
  const Vec x = r(randn(n, 111));
  double s = 0, s2 = 0;
  for (float v : x) s += v, s2 += static_cast<double>(v) * v;
  const Tensor tx = gp.act({n}, x), out = gp.poisoned(DType::F32, {1});
  be().sum({tx, out});
  EXPECT_NEAR(gp.read(out)[0], s, 1e-6 * s2);
  be().sum_squares({tx, out});
  EXPECT_NEAR(gp.read(out)[0], s2, 1e-6 * s2);
  for (int64_t C : {5, 3000}) {
    const int64_t R = 8;
    const Vec logits = r(randn(R * C, 112 + C));
    Tensor am = gp.i32({R}, std::vector<int32_t>(static_cast<size_t>(R), -7));
    be().argmax_rows({gp.act({R, C}, logits), am});
    const auto got = gp.read_i32(am);
    for (int64_t i = 0; i < R; ++i) {
      const auto row = logits.begin() + i * C;
      EXPECT_EQ(got[static_cast<size_t>(i)], std::max_element(row, row + C) - row) << "row " << i;
    }
  }
}

// ---- optimizers (f32 state; the compute copy in each low-precision dtype)

class CudaOptimizer : public ::testing::TestWithParam<DType> {
 protected:
  void SetUp() override { HWT_REQUIRE_GPU(); }
  static constexpr int64_t kN = 1003, kDecay = 600;
  static constexpr int kSteps = 5;
  CpuBackend cpu{2};
  test::TensorPool cp{cpu};
  // On a machine without a GPU the pool sits on the CPU backend, unused (the tests skip).
  test::DevPool gp{test::gpu() ? test::gpu_ref() : static_cast<Backend&>(cpu), GetParam()};
  Vec p0 = randn(kN, 7);
  // With DynaProp (GradPrune, tau 0.05: about 40% of the clipped gradients) over two ranges.
  bool prune_ = false;
  const std::vector<int32_t> ranges_ = {100, 0, 300, 0, 650, 0, 900, 0};  // int64 pairs

  // Runs kSteps updates on a backend; `step` issues the op for one step. Returns the params
  // (and checks the compute copy) and, with DynaProp, its two counters.
  template <class Step>
  std::pair<Vec, std::array<uint64_t, 2>> run(Backend& be, Step step, bool gpu_side) {
    Tensor p, g, norm, compute, zeros, linear;
    if (gpu_side) {
      p = gp.f32({kN}, p0);
      g = gp.zeros({kN});
      norm = gp.zeros({1});
      if (GetParam() != DType::F32) compute = gp.poisoned_act({kN});
      zeros = gp.make(DType::I32, Shape{4});
      linear = gp.make(DType::I32, Shape{8});
    } else {
      p = cp.f32({kN}, p0);
      g = cp.zeros({kN});
      norm = cp.zeros({1});
      zeros = cp.i32({4}, {0, 0, 0, 0});
      linear = cp.i32({8}, ranges_);
    }
    be.fill({zeros, 0});
    be.upload(linear, ranges_.data());
    for (int s = 0; s < kSteps; ++s) {
      const Vec grads = randn(kN, 1000 + static_cast<uint64_t>(s), 0.5f);
      be.upload(g, grads.data());
      be.sum_squares({g, norm});
      OptimizerTensors t{p, g, compute, kDecay};
      if (prune_) t.prune = {0.05f, zeros, linear};
      step(be, t, GradClip{norm, 3.0f, {}}, s + 1);
    }
    Vec out(static_cast<size_t>(kN));
    be.download(out.data(), p);
    if (compute.defined()) {
      EXPECT_EQ(gp.read(compute), gp.rounded(out)) << "compute copy";
    }
    std::array<uint64_t, 2> counts{};
    be.download(counts.data(), zeros);
    return {out, counts};
  }
  template <class Step>
  void compare(Step step) {
    for (const bool prune : {false, true}) {
      SCOPED_TRACE(prune ? "DynaProp" : "no pruning");
      prune_ = prune;
      const auto [want, want_zeros] = run(cpu, step, false);
      const auto [got, got_zeros] = run(test::gpu_ref(), step, true);
      EXPECT_LT(rel_err(got, want), 1e-5);
      // A gradient within rounding of tau (the norm is summed in another order) may flip.
      for (int k : {0, 1}) EXPECT_NEAR(double(got_zeros[k]), double(want_zeros[k]), 2) << k;
      if (prune) {
        EXPECT_GT(want_zeros[0], uint64_t{kSteps * 200});  // 553 of 1003 outside the ranges
        EXPECT_GT(want_zeros[1], uint64_t{kSteps * 150});  // 450 inside
      } else {
        EXPECT_EQ(want_zeros[0] + want_zeros[1], 0u);
      }
    }
  }
  Tensor state(Backend& be) { return &be == &cpu ? cp.zeros({kN}) : gp.zeros({kN}); }
};

INSTANTIATE_TEST_SUITE_P(ComputeCopy, CudaOptimizer,
                         ::testing::Values(DType::F32, DType::BF16, DType::F16), test::dtype_label);

TEST_P(CudaOptimizer, AdamW) {
  std::map<Backend*, std::pair<Tensor, Tensor>> st;
  compare([&](Backend& be, OptimizerTensors t, GradClip c, int64_t k) {
    if (k == 1) st[&be] = {state(be), state(be)};
    be.adamw_step({t, st[&be].first, st[&be].second, c,
                   at_step(AdamWHyper{1e-2f, 0.9f, 0.999f, 1e-8f, 0.1f}, k)});
  });
}

TEST_P(CudaOptimizer, Adan) {
  for (bool no_prox : {false, true}) {
    std::map<Backend*, std::array<Tensor, 4>> st;
    compare([&](Backend& be, OptimizerTensors t, GradClip c, int64_t k) {
      if (k == 1) st[&be] = {state(be), state(be), state(be), state(be)};
      auto& s = st[&be];
      be.adan_step({t, s[0], s[1], s[2], s[3], c,
                    at_step(AdanHyper{1e-2f, 0.98f, 0.92f, 0.99f, 1e-8f, 0.02f, no_prox}, k)});
    });
  }
}

TEST_P(CudaOptimizer, Sgd) {
  for (float momentum : {0.0f, 0.9f})
    for (bool nesterov : {false, true}) {
      std::map<Backend*, Tensor> st;
      compare([&](Backend& be, OptimizerTensors t, GradClip c, int64_t k) {
        if (k == 1) st[&be] = state(be);
        be.sgd_step({t, st[&be], c, at_step(SgdHyper{1e-2f, momentum, 0.01f, nesterov}, k)});
      });
    }
}

}  // namespace
}  // namespace hwt
