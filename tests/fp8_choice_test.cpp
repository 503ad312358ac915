// Which GEMMs of an fp8 step run in fp8 (analysis/fp8_choice.h): attention and misaligned GEMMs
// stay in bf16 with their reason, small ones stay where fp8 and its casts would not gain, and the
// step is priced as chosen.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "analysis/shape_advisor.h"
#include "analysis/step_estimate.h"
#include "cli_util.h"
#include "shape_test_util.h"

namespace hwt {
namespace {

using test::causal_lm;

const GpuSpec& h200() {
  static const GpuCatalog cat = load_gpu_catalog();
  return cat.find("H200");
}

StepPrediction at(const StepSpec& c, Precision p) {
  return predict_step(trace_at(c, p), GemmModel(h200(), p));
}

bool attention(const StepGemm& g) {
  return g.role != GemmRole::LinearForward && g.role != GemmRole::LinearInputGrad &&
         g.role != GemmRole::LinearWeightGrad && g.role != GemmRole::Matmul;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(Fp8Choice, Gpt2SmallRunsInFp8WhatGainsAndAttentionInBf16) {
  // GPT-2 124M at B16 T1024, its vocabulary padded to 50304 (a multiple of 64).
  const StepPrediction p = at(causal_lm(768, 12, 3072, 12, 50304, 16, 1024), Precision::Fp8);
  int head_in_fp8 = 0;
  for (const GemmGroupPrediction& g : p.gemms) {
    ASSERT_TRUE(g.fp8) << g.gemm.scope;
    const Fp8Choice& c = *g.fp8;
    if (attention(g.gemm)) {
      EXPECT_FALSE(c.fp8) << role_label(g.gemm.role);
      EXPECT_TRUE(contains(c.reason, "flash-attention")) << c.reason;
      EXPECT_EQ(g.pred.seconds, c.bf16.seconds);
      continue;
    }
    if (c.fp8) {
      EXPECT_GT(c.cast_seconds, 0);
      EXPECT_DOUBLE_EQ(g.pred.seconds, c.fp8_gemm.seconds + c.cast_seconds);
      EXPECT_LT(g.pred.seconds, c.bf16.seconds);
    } else {
      EXPECT_TRUE(contains(c.reason, "no gain")) << c.reason;
      EXPECT_EQ(g.pred.seconds, c.bf16.seconds);
    }
    // The LM head (16384 x 50304 x 768) gains far more than its casts cost; the attention output
    // projection (16384 x 768 x 768) reads and writes as much as it computes, and stays in bf16.
    if (g.gemm.scope == "head.lm") head_in_fp8 += c.fp8;
    if (g.gemm.shape.n == 768 && g.gemm.shape.k == 768) {
      EXPECT_FALSE(c.fp8) << c.reason;
    }
  }
  EXPECT_EQ(head_in_fp8, 3);
}

// A cast reads the bf16 tensor and writes its fp8 copy (three bytes an element of A and B), C is
// written in bf16 (one byte more than the model counts), and each of the two casts is a kernel.
TEST(Fp8Choice, CastsArePricedAsTheKernelsThatMakeTheCopies) {
  const StepPrediction p = at(causal_lm(768, 12, 3072, 12, 50304, 16, 1024), Precision::Fp8);
  const GemmGroupPrediction& qkv = p.gemms.front();  // layers.*.attn x.W^T, forward
  ASSERT_EQ(qkv.gemm.role, GemmRole::LinearForward);
  ASSERT_EQ(qkv.gemm.shape.n, 3 * 768);
  ASSERT_TRUE(qkv.fp8->fp8) << qkv.fp8->reason;
  const GemmModel fp8(h200(), Precision::Fp8);
  const double bytes = 3 * (16384.0 * 768 + 768.0 * 2304) + 16384.0 * 2304;
  EXPECT_DOUBLE_EQ(qkv.fp8->cast_seconds,
                   bytes / (h200().memory_bandwidth_gbs * 1e9 * fp8.constants().memory_fraction) +
                       2 * kOpGapSeconds);
}

TEST(Fp8Choice, AVocabularyNotAMultipleOf16KeepsTheHeadInBf16) {
  const StepPrediction p = at(causal_lm(768, 12, 3072, 12, 50257, 16, 1024), Precision::Fp8);
  int heads = 0;
  for (const GemmGroupPrediction& g : p.gemms)
    if (g.gemm.scope == "head.lm") {
      ++heads;
      EXPECT_FALSE(g.fp8->fp8);
      EXPECT_TRUE(contains(g.fp8->reason, "not a multiple of 16")) << g.fp8->reason;
    }
  EXPECT_EQ(heads, 3);  // forward, input gradient, weight gradient
  EXPECT_GT(p.seconds(),
            at(causal_lm(768, 12, 3072, 12, 50304, 16, 1024), Precision::Fp8).seconds());
}

TEST(Fp8Choice, SmallGemmsStayInBf16) {
  // 128 wide, 4 × 128 tokens: every product sits near the launch floor in either precision.
  const StepPrediction p = at(causal_lm(128, 2, 512, 2, 1024, 4, 128), Precision::Fp8);
  for (const GemmGroupPrediction& g : p.gemms) {
    EXPECT_FALSE(g.fp8->fp8) << g.gemm.scope << " " << role_label(g.gemm.role);
    if (!attention(g.gemm)) {
      EXPECT_TRUE(contains(g.fp8->reason, "no gain")) << g.fp8->reason;
    }
  }
}

// Each group is priced at the cheaper of its allowed forms, and the ops outside the GEMMs are the
// same bf16 work: an fp8 step is never predicted slower than the bf16 one.
TEST(Fp8Choice, AnFp8StepIsNeverSlowerThanBf16) {
  for (const StepSpec& c :
       {causal_lm(768, 12, 3072, 12, 50304, 16, 1024), causal_lm(128, 2, 512, 2, 1024, 4, 128),
        causal_lm(2048, 16, 8192, 4, 50257, 4, 2048)}) {
    const StepPrediction fp8 = at(c, Precision::Fp8), bf16 = at(c, Precision::Bf16);
    EXPECT_DOUBLE_EQ(fp8.other_seconds, bf16.other_seconds);
    EXPECT_LE(fp8.seconds(), bf16.seconds() * (1 + 1e-12));
  }
  // Other precisions make no choice.
  for (const GemmGroupPrediction& g :
       at(causal_lm(128, 2, 512, 2, 1024, 4, 128), Precision::Bf16).gemms)
    EXPECT_FALSE(g.fp8);
}

TEST(Fp8Choice, ShapeListsTheChoiceWithItsReasons) {
  const test::TempDir tmp("fp8_choice");
  const auto text = test::run_hwt("shape --config bert_tiny --precision fp8", tmp);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_TRUE(contains(text.out, "fp8 choice: 0 of 21 GEMM groups run in fp8")) << text.out;
  EXPECT_TRUE(contains(text.out, "no gain: ")) << text.out;
  const auto json = test::run_hwt("shape --config gpt2_124m --precision fp8 --json", tmp);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json j = nlohmann::json::parse(json.out);
  const nlohmann::json& first = j["gemms"][0];
  EXPECT_TRUE(first["fp8"].get<bool>());
  EXPECT_GT(first["fp8_cast_seconds"].get<double>(), 0);
  EXPECT_LT(first["predicted_seconds"].get<double>(), first["bf16_seconds"].get<double>());
}

}  // namespace
}  // namespace hwt
