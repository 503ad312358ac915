// The modern block's CUDA ops (RMSNorm plain and fused with the residual add, QK-norm,
// SwiGLU/GeGLU, rotary embeddings, grouped-query attention on every attention kernel path) against
// the CPU reference on random inputs, in f32, bf16 and f16. As in cuda_ops_test.cpp, outputs start
// poisoned and the CPU runs in f32 on the inputs rounded to the dtype under test, so an error
// measures the op: fp32 differs by summation order and device math functions only; bf16 and f16
// by the rounding of outputs (and, in attention, of P and dS operands) to 8 or 11 bits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "cuda_test_util.h"
#include "test_util.h"

namespace hwt {
namespace {

using test::randn;
using test::rel_err;
using test::rope_tables;
using Vec = std::vector<float>;

class CudaModernOps : public ::testing::TestWithParam<DType> {
 protected:
  void SetUp() override { HWT_REQUIRE_GPU(); }
  DType dt() const { return GetParam(); }
  // fp32: summation order and device expf/tanhf (a few ulps); 16-bit: outputs rounded to the
  // dtype (bf16 2^-9 relative, f16 2^-12) plus reductions over rounded operands.
  double tol() const { return test::tol(dt(), 1e-5, 1e-2); }

  CpuBackend cpu{8};  // the attention references are the bulk of these tests' time
  test::TensorPool cp{cpu};
  test::DevPool gp{test::gpu() ? test::gpu_ref() : static_cast<Backend&>(cpu), GetParam()};
  Backend& be() { return test::gpu_ref(); }
  Vec r(const Vec& v) { return gp.rounded(v); }
  // Random rows of width n whose columns from w on are zero (the padding of a norm's rows).
  Vec padded(int64_t rows, int64_t n, int64_t w, uint64_t seed, float scale = 1.0f) {
    Vec v = randn(rows * n, seed, scale);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = w; j < n; ++j) v[static_cast<size_t>(i * n + j)] = 0.0f;
    return r(v);
  }
};

INSTANTIATE_TEST_SUITE_P(Dtypes, CudaModernOps,
                         ::testing::Values(DType::F32, DType::BF16, DType::F16), test::dtype_label);

struct NormShape {
  int64_t rows, cols, width;
};

// RMSNorm through the layernorm ops: register-cached rows (256; 768 in 16 bits), uncached rows
// (768 and 1032 in fp32, 1032 in 16 bits), unvectorised rows (9), padded widths, and more rows
// than the forward's resident grid has warps (5003), so that warps loop over rows.
TEST_P(CudaModernOps, RmsNormForwardBackward) {
  const NormShape shapes[] = {
      {70, 256, 250}, {70, 768, 768}, {33, 1032, 1000}, {70, 9, 7}, {5003, 256, 256}};
  uint64_t seed = 100;
  for (const NormShape& s : shapes) {
    const int64_t R = s.rows, N = s.cols, W = s.width;
    SCOPED_TRACE(::testing::Message() << "rows " << R << " cols " << N << " width " << W);
    const Vec x = padded(R, N, W, ++seed, 2.0f), g = padded(1, N, W, ++seed),
              dy = padded(R, N, W, ++seed), dx0 = r(randn(R * N, ++seed)), dg0 = randn(N, ++seed);
    LayerNormFwd cf{cp.f32({R, N}, x), cp.f32({N}, g), {}, cp.poisoned({R, N}), {},
                    cp.poisoned({R}),  1e-6f,          W,  NormKind::RmsNorm};
    cpu.layernorm_forward(cf);
    LayerNormFwd gf{gp.act({R, N}, x),
                    gp.act({N}, g),
                    {},
                    gp.poisoned_act({R, N}),
                    {},
                    gp.poisoned(DType::F32, {R}),
                    1e-6f,
                    W,
                    NormKind::RmsNorm};
    be().layernorm_forward(gf);
    EXPECT_LT(rel_err(gp.read(gf.y), cp.read(cf.y)), tol()) << "y";
    EXPECT_LT(rel_err(gp.read(gf.rstd), cp.read(cf.rstd)), 1e-5) << "rstd";
    for (bool acc : {false, true}) {
      LayerNormBwd cb{cf.x,
                      cf.gamma,
                      {},
                      cf.rstd,
                      cp.f32({R, N}, dy),
                      acc ? cp.f32({R, N}, dx0) : cp.poisoned({R, N}),
                      cp.f32({N}, dg0),
                      {},
                      acc,
                      W,
                      NormKind::RmsNorm};
      cpu.layernorm_backward(cb);
      LayerNormBwd gb{gf.x,
                      gf.gamma,
                      {},
                      gf.rstd,
                      gp.act({R, N}, dy),
                      acc ? gp.act({R, N}, dx0) : gp.poisoned_act({R, N}),
                      gp.f32({N}, dg0),
                      {},
                      acc,
                      W,
                      NormKind::RmsNorm};
      be().layernorm_backward(gb);
      EXPECT_LT(rel_err(gp.read(gb.dx), cp.read(cb.dx)), tol()) << "dx acc=" << acc;
      EXPECT_LT(rel_err(gp.read(gb.dgamma), cp.read(cb.dgamma)), tol()) << "dgamma";
    }
  }
}

// The residual add (+dropout) fused with RMSNorm, forward and backward, with and without the
// skip gradient d_sum, at a padded width and an unvectorised one.
TEST_P(CudaModernOps, ResidualWithRmsNorm) {
  const NormShape shapes[] = {{37, 256, 250}, {37, 10, 10}, {5003, 512, 500}};
  uint64_t seed = 200;
  for (const NormShape& s : shapes)
    for (float p : {0.0f, 0.3f})
      for (bool with_dsum : {false, true}) {
        const int64_t R = s.rows, N = s.cols, W = s.width;
        SCOPED_TRACE(::testing::Message() << "rows " << R << " cols " << N << " width " << W
                                          << " p " << p << " d_sum " << with_dsum);
        const Dropout drop{p, 555 + seed};
        const Vec x = padded(R, N, W, ++seed), res = padded(R, N, W, ++seed),
                  g = padded(1, N, W, ++seed), ds = padded(R, N, W, ++seed),
                  dyv = padded(R, N, W, ++seed);
        auto run = [&](Backend& bk, auto act, auto f32, auto poison_act, auto poison_f32) {
          ResidualFwd f;
          f.x = act(Shape{R, N}, x);
          f.residual = act(Shape{R, N}, res);
          f.sum = poison_act(Shape{R, N});
          f.drop = drop;
          f.gamma = act(Shape{N}, g);
          f.y = poison_act(Shape{R, N});
          f.rstd = poison_f32(Shape{R});
          f.eps = 1e-6f;
          f.width = W;
          f.kind = NormKind::RmsNorm;
          bk.residual_forward(f);
          ResidualBwd b;
          b.drop = drop;
          if (with_dsum) b.d_sum = act(Shape{R, N}, ds);
          b.d_y = act(Shape{R, N}, dyv);
          b.sum = f.sum;
          b.gamma = f.gamma;
          b.rstd = f.rstd;
          b.d_x = poison_act(Shape{R, N});
          b.d_residual = poison_act(Shape{R, N});
          b.d_gamma = f32(Shape{N}, Vec(static_cast<size_t>(N), 0.5f));
          b.width = W;
          b.kind = NormKind::RmsNorm;
          bk.residual_backward(b);
          return std::make_pair(f, b);
        };
        auto [cf, cb] = run(
            cpu, [&](Shape sh, const Vec& v) { return cp.f32(sh, v); },
            [&](Shape sh, const Vec& v) { return cp.f32(sh, v); },
            [&](Shape sh) { return cp.poisoned(sh); }, [&](Shape sh) { return cp.poisoned(sh); });
        auto [gf, gb] = run(
            be(), [&](Shape sh, const Vec& v) { return gp.act(sh, v); },
            [&](Shape sh, const Vec& v) { return gp.f32(sh, v); },
            [&](Shape sh) { return gp.poisoned_act(sh); },
            [&](Shape sh) { return gp.poisoned(DType::F32, sh); });
        EXPECT_LT(rel_err(gp.read(gf.sum), cp.read(cf.sum)), tol()) << "sum";
        EXPECT_LT(rel_err(gp.read(gf.y), cp.read(cf.y)), tol()) << "y";
        EXPECT_LT(rel_err(gp.read(gf.rstd), cp.read(cf.rstd)), tol()) << "rstd";
        EXPECT_LT(rel_err(gp.read(gb.d_gamma), cp.read(cb.d_gamma)), tol()) << "d_gamma";
        EXPECT_LT(rel_err(gp.read(gb.d_residual), cp.read(cb.d_residual)), tol()) << "d_res";
        EXPECT_LT(rel_err(gp.read(gb.d_x), cp.read(cb.d_x)), tol()) << "d_x";
      }
}

// SwiGLU and GeGLU, forward and backward, on vectorised rows (n = 256) and unvectorised ones
// (n = 13).
TEST_P(CudaModernOps, GluForwardBackward) {
  uint64_t seed = 300;
  for (Activation kind : {Activation::SwiGlu, Activation::GeGlu})
    for (int64_t n : {256, 13}) {
      const int64_t R = 37;
      SCOPED_TRACE(::testing::Message() << "kind " << static_cast<int>(kind) << " n " << n);
      const Vec pre = r(randn(R * 2 * n, ++seed, 2.0f)), dy = r(randn(R * n, ++seed));
      const Tensor cpre = cp.f32({R, 2 * n}, pre), gpre = gp.act({R, 2 * n}, pre);
      const Tensor cy = cp.poisoned({R, n}), gy = gp.poisoned_act({R, n});
      cpu.glu_forward({cpre, cy, kind});
      be().glu_forward({gpre, gy, kind});
      EXPECT_LT(rel_err(gp.read(gy), cp.read(cy)), tol()) << "y";
      const Tensor cd = cp.poisoned({R, 2 * n}), gd = gp.poisoned_act({R, 2 * n});
      cpu.glu_backward({cpre, cp.f32({R, n}, dy), cd, kind});
      be().glu_backward({gpre, gp.act({R, n}, dy), gd, kind});
      EXPECT_LT(rel_err(gp.read(gd), cp.read(cd)), tol()) << "d_pre";
    }
}

struct HeadNormCase {
  int64_t rows, heads, kv_heads, head_dim, width;
};

// QK-norm forward and backward: head sizes 64, 128 and 256, grouped-query and multi-query
// layouts, padded heads (30 of 36 columns), and more heads than the grid has warps (3001 rows),
// so that warps loop and the gammas' gradients add many blocks' partials.
TEST_P(CudaModernOps, HeadNormForwardBackward) {
  const HeadNormCase cases[] = {
      {37, 4, 2, 64, 64}, {37, 6, 1, 128, 128}, {20, 3, 3, 36, 30}, {3001, 2, 1, 256, 256}};
  uint64_t seed = 350;
  for (const HeadNormCase& k : cases) {
    const int64_t R = k.rows, D = k.head_dim, normed = k.heads + k.kv_heads,
                  cols = (k.heads + 2 * k.kv_heads) * D;
    SCOPED_TRACE(::testing::Message() << "rows " << R << " heads " << k.heads << "/" << k.kv_heads
                                      << " head_dim " << D << " width " << k.width);
    const HeadNormShape shape{k.heads, k.kv_heads, D, k.width, 1e-6f};
    const Vec x = padded(R * (cols / D), D, k.width, ++seed, 2.0f),
              dy = padded(R * (cols / D), D, k.width, ++seed), gq = padded(1, D, k.width, ++seed),
              gk = padded(1, D, k.width, ++seed);
    HeadNormFwd cf{shape,           cp.f32({R, cols}, x),         cp.f32({D}, gq),
                   cp.f32({D}, gk), cp.poisoned({R, normed * D}), cp.poisoned({R, normed})};
    HeadNormFwd gf{shape,
                   gp.act({R, cols}, x),
                   gp.act({D}, gq),
                   gp.act({D}, gk),
                   gp.poisoned_act({R, normed * D}),
                   gp.poisoned(DType::F32, {R, normed})};
    cpu.head_norm_forward(cf);
    be().head_norm_forward(gf);
    EXPECT_LT(rel_err(gp.read(gf.qkv), cp.read(cf.qkv)), tol()) << "y";
    EXPECT_EQ(gp.read(gf.saved), cp.read(cf.saved)) << "saved";
    EXPECT_LT(rel_err(gp.read(gf.rstd), cp.read(cf.rstd)), tol()) << "rstd";

    const Vec dgq0 = randn(D, ++seed), dgk0 = randn(D, ++seed);
    HeadNormBwd cb{shape,      cp.f32({R, cols}, dy), cf.saved,         cf.rstd, cf.q_gamma,
                   cf.k_gamma, cp.f32({D}, dgq0),     cp.f32({D}, dgk0)};
    HeadNormBwd gb{shape,      gp.act({R, cols}, dy), gf.saved,         gf.rstd, gf.q_gamma,
                   gf.k_gamma, gp.f32({D}, dgq0),     gp.f32({D}, dgk0)};
    cpu.head_norm_backward(cb);
    be().head_norm_backward(gb);
    EXPECT_LT(rel_err(gp.read(gb.d_qkv), cp.read(cb.d_qkv)), tol()) << "d_qkv";
    EXPECT_LT(rel_err(gp.read(gb.d_q_gamma), cp.read(cb.d_q_gamma)), tol()) << "d_q_gamma";
    EXPECT_LT(rel_err(gp.read(gb.d_k_gamma), cp.read(cb.d_k_gamma)), tol()) << "d_k_gamma";
  }
}

// Rotary embeddings in place on q and k of a packed qkv, forward then backward, with multi-head
// and grouped-query layouts, full and partial rotation, vectorised halves and not (12 pairs is
// not a whole 16-byte chunk in 16 bits); the tables are longer than the sequence.
TEST_P(CudaModernOps, RopeForwardBackward) {
  struct Case {
    int64_t heads, kv_heads, head_dim, rotary_dim;
  };
  const Case cases[] = {{4, 4, 64, 64}, {4, 2, 64, 16}, {6, 1, 40, 24}, {4, 2, 128, 128}};
  const int64_t seq = 7, rows = 3 * seq, table_rows = seq + 3;
  uint64_t seed = 400;
  for (const Case& k : cases) {
    SCOPED_TRACE(::testing::Message() << "heads " << k.heads << " kv " << k.kv_heads << " D "
                                      << k.head_dim << " rotary " << k.rotary_dim);
    const int64_t half = k.rotary_dim / 2, width = (k.heads + 2 * k.kv_heads) * k.head_dim;
    const auto [cosv, sinv] = rope_tables(table_rows, k.rotary_dim);
    const Vec qkv = r(randn(rows * width, ++seed));
    Rope c{cp.f32({rows, width}, qkv),
           cp.f32({table_rows, half}, cosv),
           cp.f32({table_rows, half}, sinv),
           seq,
           k.heads,
           k.kv_heads,
           k.head_dim,
           k.rotary_dim};
    Rope g{gp.act({rows, width}, qkv),
           gp.f32({table_rows, half}, cosv),
           gp.f32({table_rows, half}, sinv),
           seq,
           k.heads,
           k.kv_heads,
           k.head_dim,
           k.rotary_dim};
    cpu.rope_forward(c);
    be().rope_forward(g);
    EXPECT_LT(rel_err(gp.read(g.qkv), cp.read(c.qkv)), tol()) << "forward";
    // Backward from the same rotated values on both sides.
    const Vec turned = r(cp.read(c.qkv));
    c.qkv = cp.f32({rows, width}, turned);
    g.qkv = gp.act({rows, width}, turned);
    cpu.rope_backward(c);
    be().rope_backward(g);
    EXPECT_LT(rel_err(gp.read(g.qkv), cp.read(c.qkv)), tol()) << "backward";
    // Generation's decode: each row at a position of its own, read from the device.
    std::vector<int32_t> positions(static_cast<size_t>(rows));
    for (int64_t i = 0; i < rows; ++i) positions[static_cast<size_t>(i)] = (i * 7 + 2) % table_rows;
    c.qkv = cp.f32({rows, width}, qkv);
    g.qkv = gp.act({rows, width}, qkv);
    c.positions = cp.i32({rows}, positions);
    g.positions = gp.i32({rows}, positions);
    cpu.rope_forward(c);
    be().rope_forward(g);
    EXPECT_LT(rel_err(gp.read(g.qkv), cp.read(c.qkv)), tol()) << "forward at given positions";
  }
}

struct GqaCase {
  int64_t seq, head_dim;
  bool causal;
  std::vector<int32_t> lengths;  // empty: no key mask
  float drop;
  int64_t rotary_dim = 0;  // > 0: q and k rotated, the backward turns their gradients back
};

// Head sizes 64 and 128 (Hopper wgmma kernels in 16 bits, mma.sync under TF32, generic in
// fp32), 125 (padded to 128 on copies in 16 bits and under TF32), 36 (padded to 40: mma.sync in
// 16 bits), 32 and 256 (mma.sync in 16 bits; 256 with two warps per key rows), causal or not,
// with padded keys and with dropout (its index follows the query head).
const GqaCase kGqaCases[] = {{100, 64, true, {100, 77}, 0.0f}, {96, 64, false, {}, 0.1f},
                             {130, 128, true, {}, 0.0f},       {97, 128, false, {97, 60}, 0.0f},
                             {77, 125, true, {77, 50}, 0.1f},  {66, 36, false, {66, 20}, 0.0f},
                             {70, 256, true, {70, 45}, 0.0f},  {70, 32, true, {}, 0.0f}};

// Eight query heads over 8, 4, 2 and 1 K/V heads: group sizes 1, 2, 4 and 8 (the last one
// multi-query attention).
constexpr int64_t kQueryHeads = 8;
constexpr int64_t kKvHeads[] = {8, 4, 2, 1};

class CudaGqaAttention : public CudaModernOps {
 protected:
  // B: the batch (k.lengths has B entries when set).
  void check(Backend& gpu, const GqaCase& k, int64_t kv, uint64_t seed, double tolerance,
             int64_t B = 2) {
    SCOPED_TRACE(::testing::Message()
                 << "B " << B << " S " << k.seq << " D " << k.head_dim << " kv " << kv << " causal "
                 << k.causal << " masked " << !k.lengths.empty() << " p " << k.drop);
    const int64_t H = kQueryHeads, S = k.seq, D = k.head_dim, W = (H + 2 * kv) * D;
    const Vec qkv = r(randn(B * S * W, seed)), dout = r(randn(B * S * H * D, seed + 1));
    AttentionDims dims{B,
                       S,
                       H,
                       D,
                       k.causal,
                       {},
                       1.0f / std::sqrt(static_cast<float>(D)),
                       Dropout{k.drop, 4242 + seed},
                       kv};
    AttentionDims cdims = dims, gdims = dims;
    if (!k.lengths.empty()) {
      cdims.key_lengths = cp.i32({B}, k.lengths);
      gdims.key_lengths = gp.i32({B}, k.lengths);
    }
    AttentionFwd cf{cdims, cp.f32({B * S, W}, qkv), cp.poisoned({B * S, H * D}),
                    cp.poisoned({B, H, S})};
    cpu.attention_forward(cf);
    AttentionFwd gf{gdims, gp.act({B * S, W}, qkv), gp.poisoned_act({B * S, H * D}),
                    gp.poisoned(DType::F32, {B, H, S})};
    be().synchronize();
    gpu.attention_forward(gf);
    gpu.synchronize();
    const Vec cout = cp.read(cf.out);
    EXPECT_LT(rel_err(gp.read(gf.out), cout), tolerance) << "out";
    Vec clse = cp.read(cf.lse), glse = gp.read(gf.lse);
    for (size_t i = 0; i < clse.size(); ++i) {
      ASSERT_EQ(std::isinf(clse[i]), std::isinf(glse[i])) << "lse row " << i;
      if (std::isinf(clse[i])) clse[i] = glse[i] = 0.0f;
    }
    EXPECT_LT(rel_err(glse, clse), std::min(tolerance, 2e-3)) << "lse";
    AttentionBwd cb{cdims,
                    cf.qkv,
                    cp.f32({B * S, H * D}, r(cout)),
                    cp.f32({B * S, H * D}, dout),
                    cf.lse,
                    cp.poisoned({B * S, W})};
    AttentionBwd gb{
        gdims, gf.qkv, gf.out, gp.act({B * S, H * D}, dout), gf.lse, gp.poisoned_act({B * S, W})};
    if (k.rotary_dim > 0) {  // tables longer than the sequence, as a model's are
      const auto [cosv, sinv] = rope_tables(S + 3, k.rotary_dim);
      const Shape table{S + 3, k.rotary_dim / 2};
      cb.rope = {cb.d_qkv, cp.f32(table, cosv), cp.f32(table, sinv), S, H, kv, D, k.rotary_dim};
      gb.rope = {gb.d_qkv, gp.f32(table, cosv), gp.f32(table, sinv), S, H, kv, D, k.rotary_dim};
    }
    cpu.attention_backward(cb);
    be().synchronize();
    gpu.attention_backward(gb);
    gpu.synchronize();
    const Vec cdqkv = cp.read(cb.d_qkv), gdqkv = gp.read(gb.d_qkv);
    EXPECT_LT(rel_err(gdqkv, cdqkv), tolerance) << "d_qkv";
    // dK and dV summed over a group in a fixed order: a second run is bitwise the same.
    AttentionBwd again = gb;
    again.d_qkv = again.rope.qkv = gp.poisoned_act({B * S, W});
    be().synchronize();
    gpu.attention_backward(again);
    gpu.synchronize();
    EXPECT_EQ(gp.read(again.d_qkv), gdqkv) << "backward not deterministic";
    // dQ added by atomics (train.deterministic_attention false; the Hopper kernels only).
    TrainConfig options;
    options.deterministic_attention = false;
    options.precision = gpu_precision_;
    Backend& atomic = test::gpu_ref_with(options);
    AttentionBwd ab = gb;
    ab.d_qkv = ab.rope.qkv = gp.poisoned_act({B * S, W});
    be().synchronize();
    atomic.attention_backward(ab);
    atomic.synchronize();
    EXPECT_LT(rel_err(gp.read(ab.d_qkv), cdqkv), tolerance) << "d_qkv, dQ by atomics";
  }
  void check_all(Backend& gpu, uint64_t seed, double tolerance) {
    for (const GqaCase& k : kGqaCases)
      for (int64_t kv : kKvHeads) check(gpu, k, kv, seed += 2, tolerance);
  }
  Precision gpu_precision_ = TrainConfig{}.precision;
};

INSTANTIATE_TEST_SUITE_P(Dtypes, CudaGqaAttention,
                         ::testing::Values(DType::F32, DType::BF16, DType::F16), test::dtype_label);

// fp32: the generic kernels (exact fp32); bf16/f16: the Hopper kernels (64, 128, 125 padded)
// and the mma.sync ones (32, 36 padded, 256). Tolerances as cuda_ops_test.cpp's attention.
TEST_P(CudaGqaAttention, ForwardBackwardEveryPath) {
  check_all(be(), 500, tol());
}

// The small cases above have so few dK/dV blocks that the backward shares each group's query
// heads out one a block, its partials summed in a fixed order. Many short sequences give enough
// blocks for parts of several heads (on the H200, two heads a block at head sizes 64 and 128);
// head size 32 runs the mma.sync kernels. Against the CPU and bitwise repeatable, as above.
TEST_P(CudaGqaAttention, SplitGroupsManyBlocks) {
  if (dt() == DType::F32) GTEST_SKIP() << "fp32 runs the generic kernels, which do not split";
  const GqaCase cases[] = {
      {64, 128, true, {}, 0.0f}, {64, 64, false, {}, 0.1f}, {64, 32, true, {}, 0.0f}};
  uint64_t seed = 900;
  for (const GqaCase& k : cases)
    for (int64_t kv : {1, 2}) check(be(), k, kv, seed += 2, tol(), 256);
}

// fp32 under train.precision tf32: the mma.sync kernels with TF32 products (10-bit mantissas,
// hence 5e-3) at head sizes up to 128, the generic ones beyond.
TEST_P(CudaGqaAttention, Tf32ForwardBackward) {
  if (dt() != DType::F32) GTEST_SKIP() << "fp32 activations only";
  TrainConfig options;
  options.precision = Precision::Tf32;
  gpu_precision_ = Precision::Tf32;
  check_all(test::gpu_ref_with(options), 700, 5e-3);
}

// Rotary positions' backward inside the attention backward, against the CPU's attention
// backward followed by rope_backward: fused into the stores of the Hopper kernels (64, 96 in the
// 128-wide instance, 128 at a quarter rotated as Pythia does) and of the mma.sync ones (32, and
// fp32 under TF32), a pass after them where a kernel cannot (a half of 62 or 18 columns, not
// whole 8-column fragments; head size 256; the generic fp32 kernels). The last case has enough
// blocks for the dK/dV split, so the turned-back partials are summed.
TEST_P(CudaGqaAttention, RotaryBackward) {
  const GqaCase cases[] = {
      {100, 64, true, {100, 77}, 0.0f, 64}, {97, 128, false, {97, 60}, 0.0f, 32},
      {90, 96, true, {}, 0.1f, 96},         {77, 125, true, {77, 50}, 0.0f, 124},
      {66, 36, false, {66, 20}, 0.0f, 36},  {70, 32, true, {}, 0.0f, 32},
      {70, 256, true, {70, 45}, 0.0f, 256}};
  uint64_t seed = 1100;
  for (const GqaCase& k : cases)
    for (int64_t kv : {8, 2}) check(be(), k, kv, seed += 2, tol());
  check(be(), {64, 64, false, {}, 0.0f, 64}, 1, seed += 2, tol(), 256);
  if (dt() == DType::F32) {
    TrainConfig options;
    options.precision = Precision::Tf32;
    gpu_precision_ = Precision::Tf32;
    for (const GqaCase& k : cases) check(test::gpu_ref_with(options), k, 2, seed += 2, 5e-3);
  }
}

}  // namespace
}  // namespace hwt
