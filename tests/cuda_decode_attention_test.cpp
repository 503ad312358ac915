// Generation's KV-cache ops on the GPU against the CPU reference on random inputs, in f32 and
// bf16: kv_append, and decode_attention both split over the keys (few sequences and heads: the
// flash-decoding partials and their combine) and in one block per (sequence, head); and the
// greedy chain's decode_advance. As in
// cuda_ops_test.cpp the CPU runs in f32 on the inputs rounded to the dtype under test.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "cuda_test_util.h"
#include "test_util.h"

namespace hwt {
namespace {

using test::randn;
using Vec = std::vector<float>;

struct DecodeCase {
  int64_t batch, heads, kv_heads, head_dim, capacity;
  std::vector<int32_t> lengths;
};

class CudaDecode : public ::testing::TestWithParam<DType> {
 protected:
  void SetUp() override { HWT_REQUIRE_GPU(); }
  DType dt() const { return GetParam(); }
  // fp32: summation order and exp2f against expf (a few ulps); bf16: the output rounded to 8
  // bits (2^-9 relative) over inputs already rounded alike on both sides.
  double tol() const { return test::tol(dt(), 1e-5, 1e-2); }
  CpuBackend cpu{4};
  test::TensorPool cp{cpu};
  test::DevPool gp{test::gpu() ? test::gpu_ref() : static_cast<Backend&>(cpu), GetParam()};
};

INSTANTIATE_TEST_SUITE_P(Dtypes, CudaDecode, ::testing::Values(DType::F32, DType::BF16),
                         test::dtype_label);

TEST_P(CudaDecode, AttentionMatchesTheCpu) {
  // One sequence of 4 heads over 1000 positions splits the keys; 16 x 32 heads does not;
  // lengths are not multiples of a split, one sequence has a single key, head sizes 36 (not
  // whole 16-byte chunks in bf16) and 64 to 256.
  const std::vector<DecodeCase> cases = {{1, 4, 4, 64, 1000, {777}},
                                         {2, 8, 2, 128, 300, {300, 1}},
                                         {16, 32, 8, 64, 40, std::vector<int32_t>(16, 33)},
                                         {3, 2, 1, 256, 130, {129, 65, 2}},
                                         {2, 6, 2, 80, 500, {433, 64}},
                                         {1, 3, 3, 96, 70, {70}},
                                         {2, 3, 1, 36, 90, {5, 90}}};
  for (const DecodeCase& c : cases) {
    const int64_t D = c.head_dim, width = (c.heads + 2 * c.kv_heads) * D;
    const Shape cache{c.batch, c.kv_heads, c.capacity, D};
    const Vec qkv = gp.rounded(randn(c.batch * width, 1)), k = gp.rounded(randn(cache.numel(), 2)),
              v = gp.rounded(randn(cache.numel(), 3));
    const float scale = 1.0f / std::sqrt(static_cast<float>(D));
    const Tensor want = cp.poisoned(Shape{c.batch, c.heads * D});
    cpu.decode_attention({cp.f32(Shape{c.batch, width}, qkv),
                          {cp.f32(cache, k), cp.f32(cache, v)},
                          cp.i32(Shape{c.batch}, c.lengths),
                          want,
                          c.heads,
                          c.kv_heads,
                          D,
                          scale});
    const Tensor got = gp.poisoned_act(Shape{c.batch, c.heads * D});
    test::gpu_ref().decode_attention({gp.act(Shape{c.batch, width}, qkv),
                                      {gp.act(cache, k), gp.act(cache, v)},
                                      gp.i32(Shape{c.batch}, c.lengths),
                                      got,
                                      c.heads,
                                      c.kv_heads,
                                      D,
                                      scale});
    EXPECT_LT(test::rel_err(gp.read(got), cp.read(want)), tol())
        << "batch " << c.batch << " heads " << c.heads << " capacity " << c.capacity;
  }
}

TEST_P(CudaDecode, AppendMatchesTheCpu) {
  const int64_t batch = 3, seq = 2, heads = 4, kv = 2, D = 64, cap = 9;
  const int64_t width = (heads + 2 * kv) * D;
  const Vec qkv = gp.rounded(randn(batch * seq * width, 4));
  const Shape cache{batch, kv, cap, D};
  const std::vector<int32_t> start = {0, 7, 3};
  const Tensor ck = cp.zeros(cache), cv = cp.zeros(cache);
  cpu.kv_append({cp.f32(Shape{batch * seq, width}, qkv),
                 {ck, cv},
                 cp.i32(Shape{batch}, start),
                 seq,
                 heads,
                 kv,
                 D});
  const Tensor gk = gp.act(cache, Vec(static_cast<size_t>(cache.numel()), 0.0f));
  const Tensor gv = gp.act(cache, Vec(static_cast<size_t>(cache.numel()), 0.0f));
  test::gpu_ref().kv_append({gp.act(Shape{batch * seq, width}, qkv),
                             {gk, gv},
                             gp.i32(Shape{batch}, start),
                             seq,
                             heads,
                             kv,
                             D});
  // A copy: exact in every dtype.
  EXPECT_EQ(gp.read(gk), cp.read(ck));
  EXPECT_EQ(gp.read(gv), cp.read(cv));
}

// Under rotary positions (generation's decode step) q and k are turned at the appended
// positions as they are appended: half the head turned (Pythia's rotary fraction), so k's last
// columns are copied as they are; the tables cover the cache.
TEST_P(CudaDecode, AppendTurnsQAndKAtTheirPositions) {
  const int64_t batch = 3, seq = 2, heads = 4, kv = 2, D = 64, cap = 9, rotary = 32;
  const int64_t width = (heads + 2 * kv) * D;
  const Vec qkv = gp.rounded(randn(batch * seq * width, 5));
  const Shape cache{batch, kv, cap, D}, table{cap, rotary / 2};
  const auto [cosv, sinv] = test::rope_tables(cap, rotary);
  const std::vector<int32_t> start = {0, 7, 3};
  const Tensor cq = cp.f32(Shape{batch * seq, width}, qkv);
  const Tensor ck = cp.zeros(cache), cv = cp.zeros(cache);
  cpu.kv_append({cq,
                 {ck, cv},
                 cp.i32(Shape{batch}, start),
                 seq,
                 heads,
                 kv,
                 D,
                 {cq, cp.f32(table, cosv), cp.f32(table, sinv), seq, heads, kv, D, rotary}});
  const Tensor gq = gp.act(Shape{batch * seq, width}, qkv);
  const Tensor gk = gp.act(cache, Vec(static_cast<size_t>(cache.numel()), 0.0f));
  const Tensor gv = gp.act(cache, Vec(static_cast<size_t>(cache.numel()), 0.0f));
  test::gpu_ref().kv_append(
      {gq,
       {gk, gv},
       gp.i32(Shape{batch}, start),
       seq,
       heads,
       kv,
       D,
       {gq, gp.f32(table, cosv), gp.f32(table, sinv), seq, heads, kv, D, rotary}});
  // One turn, rounded once to the activations' precision; v is a copy.
  EXPECT_LT(test::rel_err(gp.read(gq), cp.read(cq)), tol()) << "qkv";
  EXPECT_LT(test::rel_err(gp.read(gk), cp.read(ck)), tol()) << "k cache";
  EXPECT_EQ(gp.read(gv), cp.read(cv));
}

// decode_attention appending the new row itself (generation's decode step), k and q turned
// under rotary positions, fully or in part (a rotary half of whole 16-byte chunks or not), over
// one split or several: the output and both
// caches against the CPU, which appends and then attends. Grouped and multi-query heads.
TEST_P(CudaDecode, AttentionAppendsTheNewRowFirst) {
  struct Case {
    int64_t batch, heads, kv_heads, head_dim, capacity, rotary;
    std::vector<int32_t> start;
  };
  const std::vector<Case> cases = {{3, 4, 2, 64, 300, 32, {0, 150, 299}},
                                   {1, 8, 1, 128, 1000, 0, {777}},
                                   {2, 9, 3, 64, 40, 64, {5, 39}},
                                   {2, 4, 4, 80, 130, 80, {64, 127}},
                                   {1, 2, 2, 64, 50, 36, {30}}};
  uint64_t seed = 60;
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message()
                 << "batch " << c.batch << " heads " << c.heads << "/" << c.kv_heads << " d "
                 << c.head_dim << " rotary " << c.rotary);
    const int64_t D = c.head_dim, width = (c.heads + 2 * c.kv_heads) * D;
    const Shape cache{c.batch, c.kv_heads, c.capacity, D}, table{c.capacity, c.rotary / 2};
    const Vec qkv = gp.rounded(randn(c.batch * width, ++seed)),
              k = gp.rounded(randn(cache.numel(), ++seed)),
              v = gp.rounded(randn(cache.numel(), ++seed));
    std::vector<int32_t> lengths;
    for (const int32_t s : c.start) lengths.push_back(s + 1);
    const auto [cosv, sinv] = test::rope_tables(c.capacity, c.rotary);
    const float scale = 1.0f / std::sqrt(static_cast<float>(D));
    auto run = [&](Backend& be, auto& pool, auto put, Tensor out) {
      const Tensor in = put(pool, Shape{c.batch, width}, qkv);
      DecodeAttention a{in,
                        {put(pool, cache, k), put(pool, cache, v)},
                        pool.i32(Shape{c.batch}, lengths),
                        out,
                        c.heads,
                        c.kv_heads,
                        D,
                        scale};
      a.start = pool.i32(Shape{c.batch}, c.start);
      if (c.rotary > 0)
        a.rope = {in,      pool.f32(table, cosv), pool.f32(table, sinv), 1, c.heads, c.kv_heads, D,
                  c.rotary};
      be.decode_attention(a);
      return a;
    };
    const DecodeAttention want = run(
        cpu, cp, [](auto& p, Shape s, const Vec& x) { return p.f32(s, x); },
        cp.poisoned(Shape{c.batch, c.heads * D}));
    const DecodeAttention got = run(
        test::gpu_ref(), gp, [](auto& p, Shape s, const Vec& x) { return p.act(s, x); },
        gp.poisoned_act(Shape{c.batch, c.heads * D}));
    EXPECT_LT(test::rel_err(gp.read(got.out), cp.read(want.out)), tol()) << "out";
    // The turned keys rounded once to the activations' precision; the values copied.
    EXPECT_LT(test::rel_err(gp.read(got.cache.k), cp.read(want.cache.k)), tol()) << "k cache";
    EXPECT_EQ(gp.read(got.cache.v), cp.read(want.cache.v)) << "v cache";
  }
}

// The greedy chain's next inputs from random picks and positions, the cache's last position
// among them, against the CPU: integers, so equal.
TEST_P(CudaDecode, AdvanceMatchesTheCpu) {
  const int64_t batch = 300, cap = 17;  // more sequences than one block of threads
  std::vector<int32_t> picks, pos, lengths;
  for (int64_t b = 0; b < batch; ++b) {
    picks.push_back(static_cast<int32_t>((b * 7919 + 13) % 50257));
    pos.push_back(static_cast<int32_t>((b * 31) % cap));
    lengths.push_back(pos.back() + 1);
  }
  const std::vector<int32_t> ids(batch, 0), tokens(batch * cap, -1);
  auto run = [&](Backend& be, auto& pool) {
    const DecodeAdvance a{pool.i32(Shape{batch}, picks), pool.i32(Shape{batch}, ids),
                          pool.i32(Shape{batch}, pos), pool.i32(Shape{batch}, lengths),
                          pool.i32(Shape{batch, cap}, tokens)};
    be.decode_advance(a);
    return std::vector{pool.read_i32(a.ids), pool.read_i32(a.positions), pool.read_i32(a.lengths),
                       pool.read_i32(a.tokens)};
  };
  const auto want = run(cpu, cp), got = run(test::gpu_ref(), gp);
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace hwt
