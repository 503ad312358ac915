// Every CPU op: forward against a direct double-precision reference, backward against central
// finite differences of that reference (double precision), on random inputs.
#include <gtest/gtest.h>

#include "backend/cpu/cpu_backend.h"
#include "reference_ops.h"
#include "test_util.h"

namespace hwt {
namespace {

using test::numeric_grad;
using test::randn;
using test::rel_err;
using test::to_double;
using Vec = std::vector<double>;

constexpr double kFwdTol = 1e-5;  // fp32 op vs double reference
constexpr double kBwdTol = 1e-4;  // fp32 gradient vs double finite differences

class CpuOps : public ::testing::Test {
 protected:
  CpuBackend be{2};
  test::TensorPool pool{be};
};

// Test data: element 3539137 of stream 35 draws the largest uniform value (1 - 2^-24), which
// once made randn return NaN and failed a GPU layernorm test over 5003 x 768 inputs.
TEST(TestData, RandnIsFiniteAtTheLargestUniformDraw) {
  const std::vector<float> v = randn(3539138, 35);
  EXPECT_TRUE(std::isfinite(v.back()));
  for (float x : v) ASSERT_TRUE(std::isfinite(x));
}

class CpuLinear : public CpuOps, public ::testing::WithParamInterface<Activation> {};

TEST_P(CpuLinear, ForwardAndBackwardMatchReference) {
  const Activation act = GetParam();
  const int64_t M = 5, K = 7, N = 6;
  const auto x = randn(M * K, 1), w = randn(N * K, 2, 0.5f), b = randn(N, 3), dy = randn(M * N, 4);
  const Tensor tx = pool.f32({M, K}, x), tw = pool.f32({N, K}, w), tb = pool.f32({N}, b);
  const Tensor y = pool.poisoned({M, N}), pre = pool.poisoned({M, N});
  be.linear_forward({tx, tw, tb, y, act, pre});
  const Vec yref = ref::linear(to_double(x), to_double(w), to_double(b), M, K, N, act);
  EXPECT_LT(rel_err(pool.read(y), yref), kFwdTol);

  const Tensor tdy = pool.f32({M, N}, dy), dx = pool.poisoned({M, K});
  const auto dw0 = randn(N * K, 5), db0 = randn(N, 6);  // gradients accumulate onto these
  const Tensor dw = pool.f32({N, K}, dw0), db = pool.f32({N}, db0);
  be.linear_backward({tx, tw, tdy, pre, act, dx, dw, db, false});

  auto loss_x = [&](const Vec& v) {
    return test::dot(ref::linear(v, to_double(w), to_double(b), M, K, N, act), dy);
  };
  auto loss_w = [&](const Vec& v) {
    return test::dot(ref::linear(to_double(x), v, to_double(b), M, K, N, act), dy);
  };
  auto loss_b = [&](const Vec& v) {
    return test::dot(ref::linear(to_double(x), to_double(w), v, M, K, N, act), dy);
  };
  EXPECT_LT(rel_err(pool.read(dx), numeric_grad(loss_x, to_double(x))), kBwdTol);
  Vec gw = numeric_grad(loss_w, to_double(w)), gb = numeric_grad(loss_b, to_double(b));
  for (size_t i = 0; i < gw.size(); ++i) gw[i] += dw0[i];
  for (size_t i = 0; i < gb.size(); ++i) gb[i] += db0[i];
  EXPECT_LT(rel_err(pool.read(dw), gw), kBwdTol);
  EXPECT_LT(rel_err(pool.read(db), gb), kBwdTol);
}

INSTANTIATE_TEST_SUITE_P(Activations, CpuLinear,
                         ::testing::Values(Activation::None, Activation::Gelu, Activation::GeluTanh,
                                           Activation::Relu));

TEST_F(CpuOps, LinearAccumulatesInputGradientAndSkipsBias) {
  const int64_t M = 4, K = 3, N = 5;
  const auto x = randn(M * K, 11), w = randn(N * K, 12), dy = randn(M * N, 13),
             dx0 = randn(M * K, 14);
  const Tensor tx = pool.f32({M, K}, x), tw = pool.f32({N, K}, w), y = pool.poisoned({M, N});
  be.linear_forward({tx, tw, {}, y, Activation::None, {}});
  EXPECT_LT(
      rel_err(pool.read(y), ref::linear(to_double(x), to_double(w), {}, M, K, N, Activation::None)),
      kFwdTol);
  const Tensor dx = pool.f32({M, K}, dx0), dw = pool.zeros({N, K});
  be.linear_backward({tx, tw, pool.f32({M, N}, dy), {}, Activation::None, dx, dw, {}, true});
  auto loss = [&](const Vec& v) {
    return test::dot(ref::linear(v, to_double(w), {}, M, K, N, Activation::None), dy);
  };
  Vec g = numeric_grad(loss, to_double(x));
  for (size_t i = 0; i < g.size(); ++i) g[i] += dx0[i];
  EXPECT_LT(rel_err(pool.read(dx), g), kBwdTol);
}

TEST_F(CpuOps, MatmulAllTransposesAndBatches) {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      const int64_t B = 3, M = 4, K = 5, N = 6;
      const auto a = randn(B * M * K, 21), b = randn(B * K * N, 22), c0 = randn(B * M * N, 23);
      const Tensor ta_t = pool.f32(ta ? Shape{B, K, M} : Shape{B, M, K}, a);
      const Tensor tb_t = pool.f32(tb ? Shape{B, N, K} : Shape{B, K, N}, b);
      const Tensor c = pool.f32({B, M, N}, c0);
      be.matmul({ta_t, tb_t, c, ta, tb, 0.5f, 2.0f});
      Vec expect(static_cast<size_t>(B * M * N));
      for (int64_t p = 0; p < B; ++p)
        for (int64_t i = 0; i < M; ++i)
          for (int64_t j = 0; j < N; ++j) {
            double s = 0;
            for (int64_t k = 0; k < K; ++k)
              s += a[static_cast<size_t>(p * M * K + (ta ? k * M + i : i * K + k))] *
                   b[static_cast<size_t>(p * K * N + (tb ? j * K + k : k * N + j))];
            const size_t o = static_cast<size_t>(p * M * N + i * N + j);
            expect[o] = 0.5 * s + 2.0 * c0[o];
          }
      EXPECT_LT(rel_err(pool.read(c), expect), kFwdTol) << "ta=" << ta << " tb=" << tb;
    }
}

// The epilogues a GEMM can carry: y = act(x·wᵀ + b) with the pre-activation kept, batched, and
// a bias added to an accumulating output.
TEST_F(CpuOps, MatmulBiasActivationAndAccumulation) {
  const int64_t B = 2, M = 5, K = 7, N = 6;
  const auto x = randn(B * M * K, 41), w = randn(B * N * K, 42), bias = randn(N, 43);
  for (Activation act : {Activation::Gelu, Activation::GeluTanh, Activation::Relu}) {
    const Tensor y = pool.poisoned({B, M, N}), pre = pool.poisoned({B, M, N});
    be.matmul({pool.f32({B, M, K}, x), pool.f32({B, N, K}, w), y, false, true, 1.0f, 0.0f,
               pool.f32({N}, bias), act, pre});
    Vec expect_y, expect_pre;
    for (int64_t p = 0; p < B; ++p) {
      const std::vector<float> xp(x.begin() + p * M * K, x.begin() + (p + 1) * M * K);
      const std::vector<float> wp(w.begin() + p * N * K, w.begin() + (p + 1) * N * K);
      for (double v : ref::linear(to_double(xp), to_double(wp), to_double(bias), M, K, N, act))
        expect_y.push_back(v);
      for (double v :
           ref::linear(to_double(xp), to_double(wp), to_double(bias), M, K, N, Activation::None))
        expect_pre.push_back(v);
    }
    EXPECT_LT(rel_err(pool.read(y), expect_y), kFwdTol) << static_cast<int>(act);
    EXPECT_LT(rel_err(pool.read(pre), expect_pre), kFwdTol) << static_cast<int>(act);
  }
  const auto c0 = randn(M * N, 44);
  const Tensor c = pool.f32({M, N}, c0);
  const std::vector<float> x0(x.begin(), x.begin() + M * K), w0(w.begin(), w.begin() + N * K);
  be.matmul({pool.f32({M, K}, x0), pool.f32({N, K}, w0), c, false, true, 1.0f, 1.0f,
             pool.f32({N}, bias)});
  Vec expect =
      ref::linear(to_double(x0), to_double(w0), to_double(bias), M, K, N, Activation::None);
  for (size_t i = 0; i < expect.size(); ++i) expect[i] += c0[i];
  EXPECT_LT(rel_err(pool.read(c), expect), kFwdTol);
}

TEST_F(CpuOps, LayerNormForwardBackward) {
  const int64_t R = 70, N = 9;  // more rows than one reduction chunk
  const float eps = 1e-5f;
  const auto x = randn(R * N, 31, 2.0f), g = randn(N, 32), b = randn(N, 33), dy = randn(R * N, 34);
  const Tensor tx = pool.f32({R, N}, x), tg = pool.f32({N}, g), tb = pool.f32({N}, b);
  const Tensor y = pool.poisoned({R, N}), mean = pool.poisoned({R}), rstd = pool.poisoned({R});
  be.layernorm_forward({tx, tg, tb, y, mean, rstd, eps});
  EXPECT_LT(
      rel_err(pool.read(y), ref::layernorm(to_double(x), to_double(g), to_double(b), R, N, eps)),
      kFwdTol);

  const auto dx0 = randn(R * N, 35);
  for (bool accumulate : {false, true}) {
    const Tensor dx = pool.f32({R, N}, dx0), dg = pool.zeros({N}), db = pool.zeros({N});
    be.layernorm_backward({tx, tg, mean, rstd, pool.f32({R, N}, dy), dx, dg, db, accumulate});
    auto loss_x = [&](const Vec& v) {
      return test::dot(ref::layernorm(v, to_double(g), to_double(b), R, N, eps), dy);
    };
    auto loss_g = [&](const Vec& v) {
      return test::dot(ref::layernorm(to_double(x), v, to_double(b), R, N, eps), dy);
    };
    auto loss_b = [&](const Vec& v) {
      return test::dot(ref::layernorm(to_double(x), to_double(g), v, R, N, eps), dy);
    };
    Vec gx = numeric_grad(loss_x, to_double(x));
    if (accumulate)
      for (size_t i = 0; i < gx.size(); ++i) gx[i] += dx0[i];
    EXPECT_LT(rel_err(pool.read(dx), gx), kBwdTol) << "accumulate=" << accumulate;
    EXPECT_LT(rel_err(pool.read(dg), numeric_grad(loss_g, to_double(g))), kBwdTol);
    EXPECT_LT(rel_err(pool.read(db), numeric_grad(loss_b, to_double(b))), kBwdTol);
  }
}

class CpuResidual : public CpuOps, public ::testing::WithParamInterface<std::tuple<bool, float>> {};

// sum = r + dropout(x); with layernorm y = LN(sum). The test loss weighs both outputs, as a
// block does (sum feeds the skip path, y the next sublayer).
TEST_P(CpuResidual, ForwardBackward) {
  // Not a structured binding: the loss lambda captures with_ln, which clang 14 (the sanitizer
  // build's compiler) does not allow of a binding.
  const bool with_ln = std::get<0>(GetParam());
  const float p = std::get<1>(GetParam());
  const int64_t R = 6, N = 8;
  const float eps = 1e-5f;
  const Dropout drop{p, 777};
  const auto x = randn(R * N, 41), r = randn(R * N, 42), g = randn(N, 43), b = randn(N, 44);
  const auto ds = randn(R * N, 45), dyv = randn(R * N, 46);
  ResidualFwd f;
  f.x = pool.f32({R, N}, x);
  f.residual = pool.f32({R, N}, r);
  f.sum = pool.poisoned({R, N});
  f.drop = drop;
  f.eps = eps;
  if (with_ln) {
    f.gamma = pool.f32({N}, g);
    f.beta = pool.f32({N}, b);
    f.y = pool.poisoned({R, N});
    f.mean = pool.poisoned({R});
    f.rstd = pool.poisoned({R});
  }
  be.residual_forward(f);
  const Vec sref = ref::residual_sum(to_double(x), to_double(r), drop);
  EXPECT_LT(rel_err(pool.read(f.sum), sref), kFwdTol);
  if (with_ln) {
    EXPECT_LT(rel_err(pool.read(f.y), ref::layernorm(sref, to_double(g), to_double(b), R, N, eps)),
              kFwdTol);
  }

  ResidualBwd bw;
  bw.d_sum = pool.f32({R, N}, ds);
  bw.drop = drop;
  bw.d_x = pool.poisoned({R, N});
  bw.d_residual = pool.poisoned({R, N});
  if (with_ln) {
    bw.d_y = pool.f32({R, N}, dyv);
    bw.sum = f.sum;
    bw.gamma = f.gamma;
    bw.mean = f.mean;
    bw.rstd = f.rstd;
    bw.d_gamma = pool.zeros({N});
    bw.d_beta = pool.zeros({N});
  }
  be.residual_backward(bw);
  auto loss = [&](const Vec& xv, const Vec& rv, const Vec& gv, const Vec& bv) {
    const Vec s = ref::residual_sum(xv, rv, drop);
    double l = test::dot(s, ds);
    if (with_ln) l += test::dot(ref::layernorm(s, gv, bv, R, N, eps), dyv);
    return l;
  };
  const Vec X = to_double(x), Rr = to_double(r), G = to_double(g), B = to_double(b);
  EXPECT_LT(
      rel_err(pool.read(bw.d_x), numeric_grad([&](const Vec& v) { return loss(v, Rr, G, B); }, X)),
      kBwdTol);
  EXPECT_LT(rel_err(pool.read(bw.d_residual),
                    numeric_grad([&](const Vec& v) { return loss(X, v, G, B); }, Rr)),
            kBwdTol);
  if (with_ln) {
    EXPECT_LT(rel_err(pool.read(bw.d_gamma),
                      numeric_grad([&](const Vec& v) { return loss(X, Rr, v, B); }, G)),
              kBwdTol);
    EXPECT_LT(rel_err(pool.read(bw.d_beta),
                      numeric_grad([&](const Vec& v) { return loss(X, Rr, G, v); }, B)),
              kBwdTol);
  }
}

INSTANTIATE_TEST_SUITE_P(Variants, CpuResidual,
                         ::testing::Combine(::testing::Bool(), ::testing::Values(0.0f, 0.3f)));

TEST_F(CpuOps, ResidualBackwardAllowsInPlaceGradients) {
  // Post-LN blocks pass the same buffer as d_y and d_residual.
  const int64_t R = 5, N = 7;
  const auto x = randn(R * N, 51), r = randn(R * N, 52), g = randn(N, 53), b = randn(N, 54);
  const auto dyv = randn(R * N, 55);
  ResidualFwd f{pool.f32({R, N}, x),   pool.f32({R, N}, r),
                pool.poisoned({R, N}), {},
                pool.f32({N}, g),      pool.f32({N}, b),
                pool.poisoned({R, N}), pool.poisoned({R}),
                pool.poisoned({R}),    1e-5f};
  be.residual_forward(f);
  auto run = [&](bool in_place) {
    const Tensor dy = pool.f32({R, N}, dyv);
    ResidualBwd bw{{},
                   dy,
                   f.sum,
                   f.gamma,
                   f.mean,
                   f.rstd,
                   {},
                   pool.poisoned({R, N}),
                   in_place ? dy : pool.poisoned({R, N}),
                   pool.zeros({N}),
                   pool.zeros({N})};
    be.residual_backward(bw);
    return pool.read(bw.d_residual);
  };
  EXPECT_EQ(run(true), run(false));
}

TEST_F(CpuOps, DropoutKeepsExpectedFractionAndBackwardUsesSameMask) {
  const int64_t n = 20000;
  const auto x = randn(n, 61);
  const Dropout d{0.25f, 99};
  const Tensor y = pool.poisoned({n});
  be.dropout_forward({pool.f32({n}, x), y, d});
  const auto yv = pool.read(y);
  EXPECT_LT(rel_err(yv, ref::dropout(to_double(x), d)), kFwdTol);
  int64_t kept = 0;
  for (float v : yv) kept += v != 0.0f;
  EXPECT_NEAR(static_cast<double>(kept) / n, 0.75, 0.01);
  const Tensor g = pool.f32({n}, x);
  be.dropout_backward({g, g, d});  // in place
  EXPECT_EQ(pool.read(g), yv);
}

struct AttnCase {
  bool causal;
  bool lengths;
  float drop;
};

class CpuAttention : public CpuOps, public ::testing::WithParamInterface<AttnCase> {};

TEST_P(CpuAttention, ForwardBackward) {
  const AttnCase k = GetParam();
  const int64_t B = 2, S = 5, H = 2, D = 3;
  ref::AttnSpec spec{B, S, H, D, k.causal, {}, 1 / std::sqrt(3.0), Dropout{k.drop, 4242}};
  if (k.lengths) spec.lengths = {5, 3};
  const auto qkv = randn(B * S * 3 * H * D, 71), dout = randn(B * S * H * D, 72);
  AttentionDims dims{B, S, H, D, k.causal, {}, static_cast<float>(spec.scale), spec.drop};
  if (k.lengths) dims.key_lengths = pool.i32({B}, spec.lengths);
  const Tensor tqkv = pool.f32({B * S, 3 * H * D}, qkv), out = pool.poisoned({B * S, H * D});
  const Tensor lse = pool.poisoned({B, H, S});
  be.attention_forward({dims, tqkv, out, lse});
  EXPECT_LT(rel_err(pool.read(out), ref::attention(to_double(qkv), spec)), kFwdTol);

  const Tensor dqkv = pool.poisoned({B * S, 3 * H * D});
  be.attention_backward({dims, tqkv, out, pool.f32({B * S, H * D}, dout), lse, dqkv});
  auto loss = [&](const Vec& v) { return test::dot(ref::attention(v, spec), dout); };
  EXPECT_LT(rel_err(pool.read(dqkv), numeric_grad(loss, to_double(qkv))), kBwdTol);
}

INSTANTIATE_TEST_SUITE_P(Masks, CpuAttention,
                         ::testing::Values(AttnCase{false, false, 0}, AttnCase{true, false, 0},
                                           AttnCase{false, true, 0}, AttnCase{true, true, 0},
                                           AttnCase{false, true, 0.2f},
                                           AttnCase{true, false, 0.2f}));

// DynaTran inside attention (AttentionPrune) against the definition: scores and probabilities
// at or below tau zeroed, the rest not renormalised, each counted over the unmasked pairs; tau 0
// changes nothing.
TEST_F(CpuOps, AttentionPrunesScoresAndProbabilities) {
  const int64_t B = 2, S = 9, H = 2, D = 4;
  for (const bool causal : {false, true}) {
    for (const double tau : {0.0, 0.08}) {
      SCOPED_TRACE(::testing::Message() << "causal " << causal << " tau " << tau);
      ref::AttnSpec spec{B, S, H, D, causal, {9, 6}, 0.5, Dropout{}, tau};
      const auto qkv = randn(B * S * 3 * H * D, 91);
      AttentionDims dims{B, S, H, D, causal, pool.i32({B}, spec.lengths), 0.5f, Dropout{}};
      const Tensor counts = pool.i32({6}, {1, 0, 2, 0, 3, 0});  // the counters accumulate
      const Tensor out = pool.poisoned({B * S, H * D});
      be.attention_forward({dims, pool.f32({B * S, 3 * H * D}, qkv), out, pool.poisoned({B, H, S}),
                            AttentionPrune{static_cast<float>(tau), counts}});
      ref::AttnPruneCounts want;
      const Vec expected = ref::attention(to_double(qkv), spec, &want);
      EXPECT_LT(rel_err(pool.read(out), expected), kFwdTol);
      uint64_t got[3];
      be.download(got, counts);
      EXPECT_EQ(got[0], 1 + want.zero_scores);
      EXPECT_EQ(got[1], 2 + want.zero_probs);
      EXPECT_EQ(got[2], 3 + want.pairs);
      const uint64_t pairs = causal ? 2 * (45 + 39) : 2 * (81 + 54);  // heads × keys per row
      EXPECT_EQ(want.pairs, pairs);
      if (tau == 0) {
        EXPECT_EQ(want.zero_scores, 0u);
        spec.prune_tau = -1;
        EXPECT_LT(rel_err(pool.read(out), ref::attention(to_double(qkv), spec)), kFwdTol);
      } else {
        EXPECT_GT(want.zero_scores, 0u);
        EXPECT_GT(want.zero_probs, want.pairs / 10);
      }
    }
  }
}

TEST_F(CpuOps, EmbeddingForwardBackward) {
  const int64_t V = 7, h = 4, seq = 3, rows = 6;
  const std::vector<int32_t> ids = {1, 6, 1, 0, 3, 1};  // repeats exercise accumulation
  const auto table = randn(V * h, 81), pos = randn(seq * h, 82), dout = randn(rows * h, 83);
  const Tensor tids = pool.i32({rows}, ids), out = pool.poisoned({rows, h});
  const Tensor tt = pool.f32({V, h}, table), tp = pool.f32({seq, h}, pos);
  be.embedding_forward({tids, tt, tp, out, seq});
  EXPECT_LT(rel_err(pool.read(out), ref::embedding(ids, to_double(table), to_double(pos), h, seq)),
            kFwdTol);
  const Tensor dt = pool.zeros({V, h}), dp = pool.zeros({seq, h});
  be.embedding_backward({tids, pool.f32({rows, h}, dout), dt, dp, seq});
  auto lt = [&](const Vec& v) {
    return test::dot(ref::embedding(ids, v, to_double(pos), h, seq), dout);
  };
  auto lp = [&](const Vec& v) {
    return test::dot(ref::embedding(ids, to_double(table), v, h, seq), dout);
  };
  EXPECT_LT(rel_err(pool.read(dt), numeric_grad(lt, to_double(table))), kBwdTol);
  EXPECT_LT(rel_err(pool.read(dp), numeric_grad(lp, to_double(pos))), kBwdTol);
}

// Given positions (generation's decode): row r adds the table row positions[r], exactly.
TEST_F(CpuOps, EmbeddingAtGivenPositions) {
  const int64_t V = 7, h = 4, seq = 5;
  const std::vector<int32_t> ids = {1, 6, 3}, positions = {4, 0, 2};
  const auto table = randn(V * h, 84), pos = randn(seq * h, 85);
  const Tensor out = pool.poisoned({3, h});
  be.embedding_forward({pool.i32({3}, ids), pool.f32({V, h}, table), pool.f32({seq, h}, pos), out,
                        1, pool.i32({3}, positions)});
  const std::vector<float> got = pool.read(out);
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t j = 0; j < h; ++j)
      EXPECT_EQ(got[static_cast<size_t>(r * h + j)],
                table[static_cast<size_t>(ids[static_cast<size_t>(r)] * h + j)] +
                    pos[static_cast<size_t>(positions[static_cast<size_t>(r)] * h + j)]);
  EXPECT_THROW(
      be.embedding_forward({pool.i32({1}, {1}), pool.f32({V, h}, table), pool.f32({seq, h}, pos),
                            pool.poisoned({1, h}), 1, pool.i32({1}, {seq})}),
      Error);
}

TEST_F(CpuOps, EmbeddingRejectsIdsOutsideVocabulary) {
  const Tensor out = pool.poisoned({1, 2});
  EXPECT_THROW(
      be.embedding_forward({pool.i32({1}, {9}), pool.f32({3, 2}, randn(6, 1)), {}, out, 1}), Error);
}

TEST_F(CpuOps, PoolingForwardBackward) {
  const int64_t B = 3, S = 4, h = 5;
  const std::vector<int32_t> lengths = {4, 1, 2};
  const auto x = randn(B * S * h, 91), dout = randn(B * h, 92), dx0 = randn(B * S * h, 93);
  for (Pooling mode : {Pooling::First, Pooling::Mean}) {
    const Tensor tl = pool.i32({B}, lengths), out = pool.poisoned({B, h});
    be.pool_forward({pool.f32({B * S, h}, x), out, tl, S, mode});
    EXPECT_LT(rel_err(pool.read(out), ref::pool(to_double(x), lengths, S, h, mode)), kFwdTol);
    const Tensor dx = pool.f32({B * S, h}, dx0);
    be.pool_backward({pool.f32({B, h}, dout), dx, tl, S, mode});
    auto loss = [&](const Vec& v) { return test::dot(ref::pool(v, lengths, S, h, mode), dout); };
    Vec g = numeric_grad(loss, to_double(x));
    for (size_t i = 0; i < g.size(); ++i) g[i] += dx0[i];
    EXPECT_LT(rel_err(pool.read(dx), g), kBwdTol);
  }
}

TEST_F(CpuOps, CrossEntropyLossAndGradientWithIgnoredRows) {
  const int64_t R = 6, C = 7;
  const std::vector<int32_t> targets = {3, -1, 0, 6, -1, 2};
  const auto logits = randn(R * C, 101, 3.0f);
  const float scale = 0.25f;
  const Tensor tl = pool.f32({R, C}, logits), losses = pool.poisoned({R});
  be.cross_entropy({tl, pool.i32({R}, targets), losses, tl, scale});  // gradient in place
  const Vec lref = ref::cross_entropy(to_double(logits), targets, C);
  EXPECT_LT(rel_err(pool.read(losses), lref), kFwdTol);
  auto loss = [&](const Vec& v) {
    double s = 0;
    for (double l : ref::cross_entropy(v, targets, C)) s += l;
    return s * scale;
  };
  EXPECT_LT(rel_err(pool.read(tl), numeric_grad(loss, to_double(logits))), kBwdTol);
  EXPECT_THROW(be.cross_entropy(
                   {pool.f32({1, C}, randn(C, 1)), pool.i32({1}, {C}), pool.poisoned({1}), {}, 1}),
               Error);
}

// Columns past `classes` pad the row (a padded vocabulary): the loss and the classes' gradient
// are those of the unpadded row, the padding's gradient is 0 and argmax never picks it.
TEST_F(CpuOps, CrossEntropyAndArgmaxIgnorePaddingColumns) {
  const int64_t R = 5, C = 7, P = 16;
  const std::vector<int32_t> targets = {3, -1, 0, 6, 2};
  const auto logits = randn(R * C, 102, 3.0f);
  std::vector<float> padded(static_cast<size_t>(R * P), 50.0f);  // large: would dominate
  for (int64_t i = 0; i < R; ++i)
    std::copy(logits.begin() + i * C, logits.begin() + (i + 1) * C, padded.begin() + i * P);
  const Tensor tl = pool.f32({R, C}, logits), tp = pool.f32({R, P}, padded);
  const Tensor l1 = pool.poisoned({R}), l2 = pool.poisoned({R});
  be.cross_entropy({tl, pool.i32({R}, targets), l1, tl, 0.5f});
  be.cross_entropy({tp, pool.i32({R}, targets), l2, tp, 0.5f, {}, C});
  EXPECT_EQ(pool.read(l2), pool.read(l1));
  const auto g1 = pool.read(tl), g2 = pool.read(tp);
  for (int64_t i = 0; i < R; ++i)
    for (int64_t j = 0; j < P; ++j)
      EXPECT_EQ(g2[static_cast<size_t>(i * P + j)], j < C ? g1[static_cast<size_t>(i * C + j)] : 0)
          << i << "," << j;
  Tensor am = pool.i32({R}, std::vector<int32_t>(R, -7));
  be.argmax_rows({pool.f32({R, P}, padded), am, C});
  for (int64_t i = 0; i < R; ++i) {
    const auto row = logits.begin() + i * C;
    EXPECT_EQ(pool.read_i32(am)[static_cast<size_t>(i)], std::max_element(row, row + C) - row);
  }
  EXPECT_THROW(be.cross_entropy({pool.f32({1, P}, randn(P, 1)),
                                 pool.i32({1}, {static_cast<int32_t>(C)}),
                                 pool.poisoned({1}),
                                 {},
                                 1,
                                 {},
                                 C}),
               Error);  // a target in the padding
}

TEST_F(CpuOps, ReductionsAndArgmax) {
  const int64_t n = 50000;  // several reduction chunks
  const auto x = randn(n, 111);
  const Tensor tx = pool.f32({n}, x), out = pool.poisoned({1});
  double s = 0, s2 = 0;
  for (float v : x) s += v, s2 += static_cast<double>(v) * v;
  be.sum({tx, out});
  EXPECT_NEAR(pool.read(out)[0], s, 1e-6 * s2);
  be.sum_squares({tx, out});
  EXPECT_NEAR(pool.read(out)[0], s2, 1e-6 * s2);
  const auto logits = randn(40, 112);
  const Tensor idx = pool.f32({8, 5}, logits);
  Tensor am = pool.i32({8}, std::vector<int32_t>(8, -7));
  be.argmax_rows({idx, am});
  const auto got = pool.read_i32(am);
  for (int r = 0; r < 8; ++r)
    EXPECT_EQ(got[static_cast<size_t>(r)],
              std::max_element(logits.begin() + r * 5, logits.begin() + r * 5 + 5) -
                  (logits.begin() + r * 5));
}

}  // namespace
}  // namespace hwt
