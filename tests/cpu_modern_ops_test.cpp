// The modern block's CPU ops (RMSNorm, QK-norm, the gated MLP activations, rotary embeddings,
// grouped-query attention): forward against a direct double-precision reference written from
// each part's definition, backward against central finite differences of that reference.
#include <gtest/gtest.h>

#include <cmath>
#include <utility>
#include <vector>

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

// Small, so that angles differ clearly between the pairs.
constexpr double kTestRopeTheta = 500;

class CpuModernOps : public ::testing::Test {
 protected:
  CpuBackend be{2};
  test::TensorPool pool{be};
  // Cosines and sines [S, rotary/2] of the angles t * theta^(-2i / rotary).
  std::pair<Tensor, Tensor> rope_tables(int64_t S, int64_t rotary) {
    const int64_t half = rotary / 2;
    std::vector<float> cos(static_cast<size_t>(S * half)), sin(cos.size());
    for (int64_t t = 0; t < S; ++t)
      for (int64_t i = 0; i < half; ++i) {
        const double a =
            static_cast<double>(t) *
            std::pow(kTestRopeTheta, -2.0 * static_cast<double>(i) / static_cast<double>(rotary));
        cos[static_cast<size_t>(t * half + i)] = static_cast<float>(std::cos(a));
        sin[static_cast<size_t>(t * half + i)] = static_cast<float>(std::sin(a));
      }
    return {pool.f32({S, half}, cos), pool.f32({S, half}, sin)};
  }
};

// RMSNorm through the layernorm ops, over a padded width (the last columns are storage only)
// and more rows than one reduction chunk; no beta, no mean.
TEST_F(CpuModernOps, RmsNormForwardBackwardOverTheTrueWidth) {
  const int64_t R = 70, N = 12, W = 9;
  const float eps = 1e-6f;
  auto x = randn(R * N, 51, 2.0f), g = randn(N, 52), dy = randn(R * N, 53);
  for (int64_t r = 0; r < R; ++r)
    for (int64_t j = W; j < N; ++j)
      x[static_cast<size_t>(r * N + j)] = dy[static_cast<size_t>(r * N + j)] = 0;
  for (int64_t j = W; j < N; ++j) g[static_cast<size_t>(j)] = 0;
  const Tensor tx = pool.f32({R, N}, x), tg = pool.f32({N}, g);
  const Tensor y = pool.poisoned({R, N}), rstd = pool.poisoned({R});
  be.layernorm_forward({tx, tg, {}, y, {}, rstd, eps, W, NormKind::RmsNorm});
  EXPECT_LT(rel_err(pool.read(y), ref::rmsnorm(to_double(x), to_double(g), R, N, W, eps)), kFwdTol);

  const auto dx0 = randn(R * N, 54);
  for (bool accumulate : {false, true}) {
    const Tensor dx = pool.f32({R, N}, dx0), dg = pool.zeros({N});
    LayerNormBwd b{tx, tg, {},         rstd, pool.f32({R, N}, dy), dx,
                   dg, {}, accumulate, W,    NormKind::RmsNorm};
    be.layernorm_backward(b);
    auto loss_x = [&](const Vec& v) {
      return test::dot(ref::rmsnorm(v, to_double(g), R, N, W, eps), dy);
    };
    auto loss_g = [&](const Vec& v) {
      return test::dot(ref::rmsnorm(to_double(x), v, R, N, W, eps), dy);
    };
    // Padding columns: no gradient (written 0, or dx0 kept when accumulating).
    Vec gx = numeric_grad(loss_x, to_double(x));
    if (accumulate)
      for (size_t i = 0; i < gx.size(); ++i) gx[i] += dx0[i];
    EXPECT_LT(rel_err(pool.read(dx), gx), kBwdTol) << "accumulate=" << accumulate;
    EXPECT_LT(rel_err(pool.read(dg), numeric_grad(loss_g, to_double(g))), kBwdTol);
  }
}

// The residual add fused with RMSNorm (pre-norm blocks): sum = r + x, y = rmsnorm(sum).
TEST_F(CpuModernOps, ResidualWithRmsNorm) {
  const int64_t R = 6, N = 8;
  const float eps = 1e-6f;
  const auto x = randn(R * N, 61), r = randn(R * N, 62), g = randn(N, 63), dyv = randn(R * N, 64),
             ds = randn(R * N, 65);
  ResidualFwd f;
  f.x = pool.f32({R, N}, x);
  f.residual = pool.f32({R, N}, r);
  f.sum = pool.poisoned({R, N});
  f.gamma = pool.f32({N}, g);
  f.y = pool.poisoned({R, N});
  f.rstd = pool.poisoned({R});
  f.eps = eps;
  f.kind = NormKind::RmsNorm;
  be.residual_forward(f);
  const Vec sref = ref::residual_sum(to_double(x), to_double(r), {});
  EXPECT_LT(rel_err(pool.read(f.y), ref::rmsnorm(sref, to_double(g), R, N, N, eps)), kFwdTol);

  ResidualBwd b;
  b.d_sum = pool.f32({R, N}, ds);
  b.d_y = pool.f32({R, N}, dyv);
  b.sum = f.sum;
  b.gamma = f.gamma;
  b.rstd = f.rstd;
  b.d_x = pool.poisoned({R, N});
  b.d_residual = pool.poisoned({R, N});
  b.d_gamma = pool.zeros({N});
  b.kind = NormKind::RmsNorm;
  be.residual_backward(b);
  auto loss = [&](const Vec& xv) {
    const Vec s = ref::residual_sum(xv, to_double(r), {});
    return test::dot(s, ds) + test::dot(ref::rmsnorm(s, to_double(g), R, N, N, eps), dyv);
  };
  EXPECT_LT(rel_err(pool.read(b.d_x), numeric_grad(loss, to_double(x))), kBwdTol);
}

// A layernorm call must carry beta and mean, an RMSNorm call neither.
TEST_F(CpuModernOps, NormKindsRefuseTheOtherKindsArguments) {
  const Tensor x = pool.f32({2, 4}, randn(8, 66)), g = pool.f32({4}, randn(4, 67));
  const Tensor y = pool.poisoned({2, 4}), m = pool.poisoned({2}), s = pool.poisoned({2});
  EXPECT_ANY_THROW(be.layernorm_forward({x, g, g, y, m, s, 1e-5f, 0, NormKind::RmsNorm}));
  EXPECT_ANY_THROW(be.layernorm_forward({x, g, {}, y, {}, s, 1e-5f, 0, NormKind::LayerNorm}));
}

// QK-norm from its definition: each q head and each k head of packed qkv [R, (H + 2 KV) D]
// RMS-normalised over its first W columns and scaled by its kind's gamma; v as it was.
Vec head_norm_ref(const Vec& qkv, const Vec& gq, const Vec& gk, int64_t R, int64_t H, int64_t KV,
                  int64_t D, int64_t W, double eps) {
  Vec out = qkv;
  const int64_t width = (H + 2 * KV) * D;
  for (int64_t r = 0; r < R; ++r)
    for (int64_t h = 0; h < H + KV; ++h) {
      const auto at = qkv.begin() + r * width + h * D;
      const Vec y = ref::rmsnorm(Vec(at, at + D), h < H ? gq : gk, 1, D, W, eps);
      std::copy(y.begin(), y.end(), out.begin() + r * width + h * D);
    }
  return out;
}

// QK-norm over padded heads (W of D columns true) under grouped-query attention: the norm in
// place, the saved input, v untouched; dx, dγ_q and dγ_k against finite differences.
TEST_F(CpuModernOps, HeadNormForwardBackward) {
  const int64_t R = 5, H = 4, KV = 2, D = 8, W = 6, cols = (H + 2 * KV) * D;
  const float eps = 1e-6f;
  auto x = randn(R * cols, 71, 2.0f), dy = randn(R * cols, 72);
  auto gq = randn(D, 73), gk = randn(D, 74);
  for (int64_t i = 0; i < R * cols; ++i)
    if (i % D >= W) x[static_cast<size_t>(i)] = dy[static_cast<size_t>(i)] = 0;
  for (int64_t j = W; j < D; ++j) gq[static_cast<size_t>(j)] = gk[static_cast<size_t>(j)] = 0;
  const HeadNormShape shape{H, KV, D, W, eps};
  const Tensor qkv = pool.f32({R, cols}, x), tq = pool.f32({D}, gq), tk = pool.f32({D}, gk);
  const Tensor saved = pool.poisoned({R, (H + KV) * D}), rstd = pool.poisoned({R, H + KV});
  be.head_norm_forward({shape, qkv, tq, tk, saved, rstd});
  auto forward = [&](const Vec& v, const Vec& q, const Vec& k) {
    return head_norm_ref(v, q, k, R, H, KV, D, W, eps);
  };
  EXPECT_LT(rel_err(pool.read(qkv), forward(to_double(x), to_double(gq), to_double(gk))), kFwdTol);
  const std::vector<float> kept = pool.read(saved);
  for (int64_t r = 0; r < R; ++r)
    for (int64_t j = 0; j < (H + KV) * D; ++j)
      ASSERT_EQ(kept[static_cast<size_t>(r * (H + KV) * D + j)],
                x[static_cast<size_t>(r * cols + j)]);

  // The v part of the gradient passes through as it is.
  const Tensor dqkv = pool.f32({R, cols}, dy), dgq = pool.zeros({D}), dgk = pool.zeros({D});
  be.head_norm_backward({shape, dqkv, saved, rstd, tq, tk, dgq, dgk});
  Vec gx = numeric_grad(
      [&](const Vec& v) { return test::dot(forward(v, to_double(gq), to_double(gk)), dy); },
      to_double(x));
  EXPECT_LT(rel_err(pool.read(dqkv), gx), kBwdTol);
  EXPECT_LT(rel_err(pool.read(dgq), numeric_grad(
                                        [&](const Vec& g) {
                                          return test::dot(forward(to_double(x), g, to_double(gk)),
                                                           dy);
                                        },
                                        to_double(gq))),
            kBwdTol);
  EXPECT_LT(rel_err(pool.read(dgk), numeric_grad(
                                        [&](const Vec& g) {
                                          return test::dot(forward(to_double(x), to_double(gq), g),
                                                           dy);
                                        },
                                        to_double(gk))),
            kBwdTol);
}

class CpuGlu : public CpuModernOps, public ::testing::WithParamInterface<Activation> {};

TEST_P(CpuGlu, ForwardBackward) {
  const Activation kind = GetParam();
  const int64_t R = 5, N = 7;
  const auto pre = randn(R * 2 * N, 71, 1.5f), dy = randn(R * N, 72);
  const Tensor tpre = pool.f32({R, 2 * N}, pre), y = pool.poisoned({R, N});
  be.glu_forward({tpre, y, kind});
  EXPECT_LT(rel_err(pool.read(y), ref::glu(to_double(pre), kind, R, N)), kFwdTol);
  const Tensor d_pre = pool.poisoned({R, 2 * N});
  be.glu_backward({tpre, pool.f32({R, N}, dy), d_pre, kind});
  auto loss = [&](const Vec& v) { return test::dot(ref::glu(v, kind, R, N), dy); };
  EXPECT_LT(rel_err(pool.read(d_pre), numeric_grad(loss, to_double(pre))), kBwdTol);
}

INSTANTIATE_TEST_SUITE_P(Kinds, CpuGlu, ::testing::Values(Activation::SwiGlu, Activation::GeGlu),
                         [](const auto& kind) {
                           return kind.param == Activation::SwiGlu ? "swiglu" : "geglu";
                         });

TEST_F(CpuModernOps, GluRefusesAnUngatedActivation) {
  const Tensor pre = pool.f32({2, 4}, randn(8, 73)), y = pool.poisoned({2, 2});
  EXPECT_ANY_THROW(be.glu_forward({pre, y, Activation::Gelu}));
}

struct RopeCase {
  int64_t heads, kv, head_dim, rotary_dim;
};

class CpuRope : public CpuModernOps, public ::testing::WithParamInterface<RopeCase> {};

// Forward against the definition; backward is the gradient of <rope(x), dy> with respect to x
// (v is left as it is: its gradient passes through).
TEST_P(CpuRope, ForwardBackward) {
  const RopeCase k = GetParam();
  const int64_t B = 2, S = 5, rows = B * S, width = (k.heads + 2 * k.kv) * k.head_dim;
  const auto [tc, ts] = rope_tables(S, k.rotary_dim);
  const auto x = randn(rows * width, 81), dy = randn(rows * width, 82);
  const Tensor tx = pool.f32({rows, width}, x);
  be.rope_forward({tx, tc, ts, S, k.heads, k.kv, k.head_dim, k.rotary_dim});
  auto ref = [&](const Vec& v) {
    return ref::rope(v, rows, S, k.heads, k.kv, k.head_dim, k.rotary_dim, kTestRopeTheta);
  };
  EXPECT_LT(rel_err(pool.read(tx), ref(to_double(x))), kFwdTol);
  const Tensor g = pool.f32({rows, width}, dy);
  be.rope_backward({g, tc, ts, S, k.heads, k.kv, k.head_dim, k.rotary_dim});
  auto loss = [&](const Vec& v) { return test::dot(ref(v), dy); };
  EXPECT_LT(rel_err(pool.read(g), numeric_grad(loss, to_double(x))), kBwdTol);
}

// Given positions (generation's decode): each row turns as row `positions[r]` of a sequence
// does, against the definition.
TEST_P(CpuRope, AtGivenPositions) {
  const RopeCase k = GetParam();
  const int64_t S = 6, width = (k.heads + 2 * k.kv) * k.head_dim;
  const std::vector<int32_t> positions = {5, 0, 3};
  const auto [tc, ts] = rope_tables(S, k.rotary_dim);
  const auto x = randn(3 * width, 86);
  const Tensor tx = pool.f32({3, width}, x);
  Rope r{tx, tc, ts, 1, k.heads, k.kv, k.head_dim, k.rotary_dim};
  r.positions = pool.i32({3}, positions);
  be.rope_forward(r);
  const std::vector<float> got = pool.read(tx);
  for (size_t i = 0; i < positions.size(); ++i) {
    // Row i placed at position p of a sequence of p + 1 rows of the definition.
    const int64_t p = positions[i];
    Vec seq(static_cast<size_t>((p + 1) * width), 0.0);
    std::copy(x.begin() + static_cast<int64_t>(i) * width,
              x.begin() + static_cast<int64_t>(i + 1) * width, seq.begin() + p * width);
    const Vec want =
        ref::rope(seq, p + 1, p + 1, k.heads, k.kv, k.head_dim, k.rotary_dim, kTestRopeTheta);
    const std::vector<float> row(got.begin() + static_cast<int64_t>(i) * width,
                                 got.begin() + static_cast<int64_t>(i + 1) * width);
    EXPECT_LT(rel_err(row, Vec(want.begin() + p * width, want.end())), kFwdTol) << "row " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, CpuRope,
                         ::testing::Values(RopeCase{2, 2, 6, 6},   // whole head, MHA
                                           RopeCase{4, 2, 8, 8},   // GQA
                                           RopeCase{4, 1, 8, 2},   // MQA, a quarter (NeoX)
                                           RopeCase{3, 3, 10, 4})  // partial, odd head count
);

struct GqaCase {
  int64_t heads, kv;
  bool causal, lengths;
};

class CpuGroupedAttention : public CpuModernOps, public ::testing::WithParamInterface<GqaCase> {};

// Each K/V head serves heads / kv query heads; its gradient sums over the group.
TEST_P(CpuGroupedAttention, ForwardBackward) {
  const GqaCase k = GetParam();
  const int64_t B = 2, S = 5, D = 3, width = (k.heads + 2 * k.kv) * D;
  ref::AttnSpec spec{B, S, k.heads, D, k.causal, {}, 1 / std::sqrt(3.0), {}, -1, k.kv};
  if (k.lengths) spec.lengths = {5, 3};
  const auto qkv = randn(B * S * width, 91), dout = randn(B * S * k.heads * D, 92);
  AttentionDims dims{B, S, k.heads, D, k.causal, {}, static_cast<float>(spec.scale), {}, k.kv};
  if (k.lengths) dims.key_lengths = pool.i32({B}, spec.lengths);
  const Tensor tqkv = pool.f32({B * S, width}, qkv), out = pool.poisoned({B * S, k.heads * D});
  const Tensor lse = pool.poisoned({B, k.heads, S});
  be.attention_forward({dims, tqkv, out, lse});
  EXPECT_LT(rel_err(pool.read(out), ref::attention(to_double(qkv), spec)), kFwdTol);
  const Tensor dqkv = pool.poisoned({B * S, width});
  be.attention_backward({dims, tqkv, out, pool.f32({B * S, k.heads * D}, dout), lse, dqkv});
  auto loss = [&](const Vec& v) { return test::dot(ref::attention(v, spec), dout); };
  EXPECT_LT(rel_err(pool.read(dqkv), numeric_grad(loss, to_double(qkv))), kBwdTol);
}

// With rotary positions: attention over rope_forward's q and k; the backward, given the
// tables, returns the gradient with respect to the unrotated qkv.
TEST_P(CpuGroupedAttention, RotaryBackward) {
  const GqaCase k = GetParam();
  const int64_t B = 2, S = 5, D = 4, rotary = 4, width = (k.heads + 2 * k.kv) * D;
  ref::AttnSpec spec{B, S, k.heads, D, k.causal, {}, 0.5, {}, -1, k.kv};
  if (k.lengths) spec.lengths = {5, 3};
  const auto qkv = randn(B * S * width, 93), dout = randn(B * S * k.heads * D, 94);
  AttentionDims dims{B, S, k.heads, D, k.causal, {}, static_cast<float>(spec.scale), {}, k.kv};
  if (k.lengths) dims.key_lengths = pool.i32({B}, spec.lengths);
  const auto [tc, ts] = rope_tables(S, rotary);
  const Tensor tqkv = pool.f32({B * S, width}, qkv), out = pool.poisoned({B * S, k.heads * D});
  const Tensor lse = pool.poisoned({B, k.heads, S}), dqkv = pool.poisoned({B * S, width});
  be.rope_forward({tqkv, tc, ts, S, k.heads, k.kv, D, rotary});
  be.attention_forward({dims, tqkv, out, lse});
  be.attention_backward({dims, tqkv, out, pool.f32({B * S, k.heads * D}, dout), lse, dqkv,
                         Rope{dqkv, tc, ts, S, k.heads, k.kv, D, rotary}});
  auto loss = [&](const Vec& v) {
    const Vec rotated = ref::rope(v, B * S, S, k.heads, k.kv, D, rotary, kTestRopeTheta);
    return test::dot(ref::attention(rotated, spec), dout);
  };
  EXPECT_LT(rel_err(pool.read(dqkv), numeric_grad(loss, to_double(qkv))), kBwdTol);
}

INSTANTIATE_TEST_SUITE_P(Groups, CpuGroupedAttention,
                         ::testing::Values(GqaCase{4, 2, false, false}, GqaCase{4, 2, true, true},
                                           GqaCase{4, 1, true, false}, GqaCase{6, 3, false, true},
                                           GqaCase{8, 1, false, true}));

}  // namespace
}  // namespace hwt
