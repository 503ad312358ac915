// The GEMM list the shape advisor reads from a traced training step, against the published
// formulas (Anthony et al.; Narayanan et al.): 24·b·s·h² + 4·b·s²·h forward FLOPs per layer,
// backward twice that, logits 2·b·s·h·V, and the GPT-2 parameter count.
#include <gtest/gtest.h>

#include "analysis/shape_advisor.h"
#include "analysis/step_gemms.h"
#include "shape_test_util.h"

namespace hwt {
namespace {

using test::causal_lm;

struct Flops {
  double layer_fwd = 0, layer_bwd = 0, head_fwd = 0, head_bwd = 0;
};

Flops sum(const std::vector<StepGemm>& gemms) {
  Flops f;
  for (const StepGemm& g : gemms) {
    const bool layer = g.scope.rfind("layers.", 0) == 0, fwd = g.phase == Phase::Forward;
    (layer ? (fwd ? f.layer_fwd : f.layer_bwd) : (fwd ? f.head_fwd : f.head_bwd)) += g.flops();
  }
  return f;
}

TEST(ShapeTrace, GemmFlopsMatchThePublishedFormula) {
  const int64_t b = 4, s = 256, h = 384, L = 3, V = 1000;
  const StepSpec c = causal_lm(h, 6, 4 * h, L, V, b, s);
  const Flops f = sum(step_gemms(trace_at(c, Precision::Bf16)));
  const double bd = b, sd = s, hd = h;
  const double per_layer = 24 * bd * sd * hd * hd + 4 * bd * sd * sd * hd;
  EXPECT_DOUBLE_EQ(f.layer_fwd, L * per_layer);
  EXPECT_DOUBLE_EQ(f.layer_bwd, 2 * L * per_layer);
  EXPECT_DOUBLE_EQ(f.head_fwd, 2 * bd * sd * hd * V);
  EXPECT_DOUBLE_EQ(f.head_bwd, 2 * f.head_fwd);
}

TEST(ShapeTrace, AnyFfnWidthMatchesTheGeneralFormula) {
  // Per layer: QKV 6bsh², output 2bsh², MLP 4bsh·ffn, attention 4bs²h.
  const int64_t b = 2, s = 128, h = 320, ffn = 1000, L = 2;
  const Flops f = sum(step_gemms(trace_at(causal_lm(h, 5, ffn, L, 500, b, s), Precision::Fp32)));
  const double bs = static_cast<double>(b * s);
  const double per_layer = bs * (8.0 * h * h + 4.0 * h * ffn) + 4 * bs * s * h;
  EXPECT_DOUBLE_EQ(f.layer_fwd, L * per_layer);
  EXPECT_DOUBLE_EQ(f.layer_bwd, 2 * L * per_layer);
}

TEST(ShapeTrace, Gpt2SmallParameterCount) {
  const Workload w = trace_at(causal_lm(768, 12, 3072, 12, 50257, 1, 1024), Precision::Bf16);
  // V·h + S·h + L·(12h² + 13h) + 2h (tied LM head).
  EXPECT_EQ(w.parameters, 124439808);
}

TEST(ShapeTrace, GroupsCarryCountsAndStorageLayouts) {
  const int64_t b = 2, s = 128, h = 256, L = 4, V = 777;
  const std::vector<StepGemm> g =
      step_gemms(trace_at(causal_lm(h, 4, 4 * h, L, V, b, s), Precision::Bf16));
  auto find = [&](const std::string& scope, const std::string& role, int64_t n) -> const StepGemm* {
    for (const StepGemm& x : g)
      if (x.scope == scope && role_label(x.role) == role && x.shape.n == n) return &x;
    return nullptr;
  };
  const StepGemm* qkv = find("layers.*.attn", "x.W^T", 3 * h);
  ASSERT_NE(qkv, nullptr);
  EXPECT_EQ(qkv->count, L);
  EXPECT_EQ(qkv->shape, (GemmShape{b * s, 3 * h, h, 1, false, true}));
  // Weight gradient of the QKV projection: dy^T (3h x tokens) times x (tokens x h).
  const StepGemm* dw = find("layers.*.attn", "dy^T.x", h);
  ASSERT_NE(dw, nullptr);
  EXPECT_EQ(dw->shape.k, b * s);
  EXPECT_TRUE(dw->shape.trans_a);
  // Attention scores per (batch, head): s x s over head size 64.
  const StepGemm* scores = find("layers.*.attn", "Q.K^T", s);
  ASSERT_NE(scores, nullptr);
  EXPECT_EQ(scores->shape, (GemmShape{s, s, h / 4, b * 4, false, true}));
  // The vocabulary is a leading dimension of all three logits GEMMs.
  int logits = 0;
  for (const StepGemm& x : g)
    if (x.scope == "head.lm") {
      ++logits;
      EXPECT_EQ(worst_alignment_bytes(x.shape, 2), 2) << role_label(x.role);
    }
  EXPECT_EQ(logits, 3);
}

}  // namespace
}  // namespace hwt
