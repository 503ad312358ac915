// Generation's KV-cache ops on the CPU against a direct double-precision reference: kv_append
// places each row's k and v heads at its position, and decode_attention is softmax(q·Kᵀ·scale)·V
// over each sequence's cached keys, grouped-query included; decode_advance makes the greedy
// chain's next inputs from a step's picks.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "test_util.h"

namespace hwt {
namespace {

using test::randn;
using Vec = std::vector<float>;

struct DecodeShape {
  int64_t batch, heads, kv_heads, head_dim, capacity;
  std::vector<int32_t> lengths;  // per sequence, <= capacity
};

// out[b, h] = Σ_j softmax_j(scale · q·k_j) v_j over j < lengths[b], in double.
Vec reference(const DecodeShape& s, const Vec& qkv, const Vec& k, const Vec& v, float scale) {
  const int64_t D = s.head_dim, width = (s.heads + 2 * s.kv_heads) * D,
                group = s.heads / s.kv_heads;
  Vec out(static_cast<size_t>(s.batch * s.heads * D));
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t h = 0; h < s.heads; ++h) {
      const int64_t n = s.lengths[static_cast<size_t>(b)];
      const size_t base = static_cast<size_t>(((b * s.kv_heads + h / group) * s.capacity) * D);
      std::vector<double> p(static_cast<size_t>(n));
      double mx = -INFINITY, z = 0;
      for (int64_t j = 0; j < n; ++j) {
        double dot = 0;
        for (int64_t i = 0; i < D; ++i)
          dot += static_cast<double>(qkv[static_cast<size_t>(b * width + h * D + i)]) *
                 k[base + static_cast<size_t>(j * D + i)];
        p[static_cast<size_t>(j)] = dot * scale;
        mx = std::max(mx, p[static_cast<size_t>(j)]);
      }
      for (double& x : p) z += (x = std::exp(x - mx));
      for (int64_t i = 0; i < D; ++i) {
        double o = 0;
        for (int64_t j = 0; j < n; ++j)
          o += p[static_cast<size_t>(j)] / z * v[base + static_cast<size_t>(j * D + i)];
        out[static_cast<size_t>((b * s.heads + h) * D + i)] = static_cast<float>(o);
      }
    }
  return out;
}

class CpuDecodeAttention : public ::testing::TestWithParam<DecodeShape> {};

TEST_P(CpuDecodeAttention, MatchesTheDirectSoftmax) {
  const DecodeShape s = GetParam();
  CpuBackend cpu(2);
  test::TensorPool pool(cpu);
  const int64_t D = s.head_dim, width = (s.heads + 2 * s.kv_heads) * D;
  const Shape cache{s.batch, s.kv_heads, s.capacity, D};
  const Vec qkv = randn(s.batch * width, 11), k = randn(cache.numel(), 12),
            v = randn(cache.numel(), 13);
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  const Tensor out = pool.poisoned(Shape{s.batch, s.heads * D});
  cpu.decode_attention({pool.f32(Shape{s.batch, width}, qkv),
                        {pool.f32(cache, k), pool.f32(cache, v)},
                        pool.i32(Shape{s.batch}, s.lengths),
                        out,
                        s.heads,
                        s.kv_heads,
                        D,
                        scale});
  // fp32 sums of at most a few hundred products against double: a few ulps of the result.
  EXPECT_LT(test::rel_err(pool.read(out), reference(s, qkv, k, v, scale)), 1e-6);
}

// Multi-head and grouped-query (2 and 4 query heads per K/V head, one K/V head), one key,
// lengths differing within a batch and not multiples of any split, a full cache.
INSTANTIATE_TEST_SUITE_P(Shapes, CpuDecodeAttention,
                         ::testing::Values(DecodeShape{1, 4, 4, 16, 8, {1}},
                                           DecodeShape{3, 4, 2, 32, 70, {70, 1, 37}},
                                           DecodeShape{2, 8, 2, 64, 200, {129, 65}},
                                           DecodeShape{4, 6, 1, 8, 33, {33, 17, 2, 5}}));

TEST(CpuKvAppend, WritesEachRowAtItsPosition) {
  CpuBackend cpu(1);
  test::TensorPool pool(cpu);
  const int64_t batch = 2, seq = 3, heads = 4, kv = 2, D = 4, cap = 8;
  const int64_t width = (heads + 2 * kv) * D;
  const Vec qkv = randn(batch * seq * width, 5);
  const Shape cache{batch, kv, cap, D};
  const Tensor k = pool.zeros(cache), v = pool.zeros(cache);
  cpu.kv_append({pool.f32(Shape{batch * seq, width}, qkv),
                 {k, v},
                 pool.i32(Shape{batch}, {2, 5}),
                 seq,
                 heads,
                 kv,
                 D});
  const Vec kh = pool.read(k), vh = pool.read(v);
  const int32_t start[] = {2, 5};
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < kv; ++h)
      for (int64_t p = 0; p < cap; ++p)
        for (int64_t i = 0; i < D; ++i) {
          const size_t at = static_cast<size_t>(((b * kv + h) * cap + p) * D + i);
          const int64_t t = p - start[b];
          const bool written = t >= 0 && t < seq;
          const size_t row = static_cast<size_t>((b * seq + t) * width);
          EXPECT_EQ(kh[at], written ? qkv[row + static_cast<size_t>((heads + h) * D + i)] : 0.0f);
          EXPECT_EQ(vh[at],
                    written ? qkv[row + static_cast<size_t>((heads + kv + h) * D + i)] : 0.0f);
        }
}

// Under rotary positions kv_append turns q and k at the positions it appends them at: the same
// as rope_forward at those positions followed by a plain append (the same CPU code, so equal).
TEST(CpuKvAppend, TurnsQAndKAtTheAppendedPositions) {
  CpuBackend cpu(1);
  test::TensorPool pool(cpu);
  const int64_t batch = 2, seq = 3, heads = 4, kv = 2, D = 8, cap = 8, rotary = 4;
  const int64_t width = (heads + 2 * kv) * D;
  const Vec qkv = randn(batch * seq * width, 6);
  const Shape cache{batch, kv, cap, D}, table{cap, rotary / 2};
  const auto [cosv, sinv] = test::rope_tables(cap, rotary);
  const Tensor cos = pool.f32(table, cosv), sin = pool.f32(table, sinv);
  const Tensor fused = pool.f32(Shape{batch * seq, width}, qkv);
  const Tensor k = pool.zeros(cache), v = pool.zeros(cache);
  cpu.kv_append({fused,
                 {k, v},
                 pool.i32(Shape{batch}, {2, 5}),
                 seq,
                 heads,
                 kv,
                 D,
                 {fused, cos, sin, seq, heads, kv, D, rotary}});
  const Tensor apart = pool.f32(Shape{batch * seq, width}, qkv);
  Rope turn{apart, cos, sin, seq, heads, kv, D, rotary};
  turn.positions = pool.i32(Shape{batch * seq}, {2, 3, 4, 5, 6, 7});
  cpu.rope_forward(turn);
  const Tensor k2 = pool.zeros(cache), v2 = pool.zeros(cache);
  cpu.kv_append({apart, {k2, v2}, pool.i32(Shape{batch}, {2, 5}), seq, heads, kv, D});
  EXPECT_EQ(pool.read(fused), pool.read(apart));
  EXPECT_EQ(pool.read(k), pool.read(k2));
  EXPECT_EQ(pool.read(v), pool.read(v2));
  EXPECT_NE(pool.read(fused), qkv);  // q and k did turn
}

// With `start` decode_attention appends the new row's k and v itself (turned, q too) and then
// attends: the same as kv_append followed by decode_attention (the same CPU code, so equal),
// and qkv is left as it was.
TEST(CpuDecodeAttention, AppendsTheNewRowFirst) {
  CpuBackend cpu(1);
  test::TensorPool pool(cpu);
  const int64_t batch = 2, heads = 4, kv = 2, D = 8, cap = 9, rotary = 4;
  const int64_t width = (heads + 2 * kv) * D;
  const Vec qkv = randn(batch * width, 7);
  const Shape cache{batch, kv, cap, D}, table{cap, rotary / 2};
  const auto [cosv, sinv] = test::rope_tables(cap, rotary);
  const Tensor cos = pool.f32(table, cosv), sin = pool.f32(table, sinv);
  const Vec k0 = randn(cache.numel(), 8), v0 = randn(cache.numel(), 9);
  const std::vector<int32_t> start = {3, 8}, lengths = {4, 9};

  const Tensor in = pool.f32(Shape{batch, width}, qkv), k = pool.f32(cache, k0),
               v = pool.f32(cache, v0), out = pool.poisoned(Shape{batch, heads * D});
  DecodeAttention fused{in, {k, v}, pool.i32(Shape{batch}, lengths), out, heads, kv, D, 0.3f};
  fused.start = pool.i32(Shape{batch}, start);
  fused.rope = {in, cos, sin, 1, heads, kv, D, rotary};
  cpu.decode_attention(fused);

  const Tensor apart = pool.f32(Shape{batch, width}, qkv), k2 = pool.f32(cache, k0),
               v2 = pool.f32(cache, v0), out2 = pool.poisoned(Shape{batch, heads * D});
  cpu.kv_append({apart,
                 {k2, v2},
                 pool.i32(Shape{batch}, start),
                 1,
                 heads,
                 kv,
                 D,
                 {apart, cos, sin, 1, heads, kv, D, rotary}});
  cpu.decode_attention(
      {apart, {k2, v2}, pool.i32(Shape{batch}, lengths), out2, heads, kv, D, 0.3f});
  EXPECT_EQ(pool.read(out), pool.read(out2));
  EXPECT_EQ(pool.read(k), pool.read(k2));
  EXPECT_EQ(pool.read(v), pool.read(v2));
  EXPECT_EQ(pool.read(in), qkv);
  // A start that is not the last position of its length is refused.
  fused.start = pool.i32(Shape{batch}, {3, 7});
  EXPECT_THROW(cpu.decode_attention(fused), Error);
}

// Each pick becomes its sequence's next id and is kept at the position it follows; positions
// step on, except at the cache's last one, and lengths are the positions plus the new token.
TEST(CpuDecodeAdvance, MakesTheNextStepsInputs) {
  CpuBackend cpu(1);
  test::TensorPool pool(cpu);
  const int64_t cap = 5;
  const Tensor picks = pool.i32(Shape{3}, {7, 8, 9}), ids = pool.i32(Shape{3}, {0, 0, 0}),
               pos = pool.i32(Shape{3}, {0, 3, 4}), lengths = pool.i32(Shape{3}, {1, 4, 5}),
               tokens = pool.i32(Shape{3, cap}, std::vector<int32_t>(3 * cap, -1));
  cpu.decode_advance({picks, ids, pos, lengths, tokens});
  EXPECT_EQ(pool.read_i32(ids), (std::vector<int32_t>{7, 8, 9}));
  EXPECT_EQ(pool.read_i32(pos), (std::vector<int32_t>{1, 4, 4}));
  EXPECT_EQ(pool.read_i32(lengths), (std::vector<int32_t>{2, 5, 5}));
  std::vector<int32_t> want(3 * cap, -1);
  want[0] = 7, want[cap + 3] = 8, want[2 * cap + 4] = 9;
  EXPECT_EQ(pool.read_i32(tokens), want);
  // Tensors that do not match the batch are refused.
  EXPECT_THROW(cpu.decode_advance({picks, ids, pos, pool.i32(Shape{2}, {1, 1}), tokens}), Error);
}

}  // namespace
}  // namespace hwt
