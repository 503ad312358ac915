// The shape model's fp8 choice applied to a training run's layers (analysis/fp8_layer_choice.h):
// each product of each layer follows the GEMM group that holds it in the traced step.
#include <gtest/gtest.h>

#include "analysis/fp8_layer_choice.h"
#include "analysis/shape_advisor.h"
#include "backend/trace/trace_backend.h"
#include "model/model.h"
#include "shape_test_util.h"

namespace hwt {
namespace {

const GpuSpec& h200() {
  static const GpuCatalog cat = load_gpu_catalog();
  return cat.find("H200");
}

struct Choice {
  std::vector<Fp8Layer> layers;
  std::vector<std::string> notes;
};

Choice choose(const StepSpec& spec) {
  TraceBackend trace;
  const Model model(spec.config.model, trace, DType::BF16);
  Choice c{fp8_layers(model), {}};
  c.notes = choose_fp8_products(
      step_gemms(trace_at(spec, Precision::Fp8)), GemmModel(h200(), Precision::Fp8),
      GemmModel(h200(), Precision::Bf16), spec.batch * spec.seq, c.layers);
  return c;
}

int products_in_fp8(const std::vector<Fp8Layer>& layers) {
  int n = 0;
  for (const Fp8Layer& l : layers) n += l.forward + l.input_grad + l.weight_grad;
  return n;
}

// GPT-2 124M at B16 T1024 (its vocabulary padded to 50304): every linear GEMM gains in fp8, as
// Fp8Choice.Gpt2SmallRunsItsLinearLayersInFp8AndAttentionInBf16 finds for the groups.
// A 1B-class shape (hidden 2048, FFN 8192) at 4 x 2048 tokens: every product gains more in fp8
// than its casts cost.
TEST(Fp8LayerChoice, LargeLayersRunEveryProductInFp8) {
  const Choice c = choose(test::causal_lm(2048, 16, 8192, 4, 50304, 4, 2048));
  ASSERT_EQ(c.layers.size(), 17u);  // 4 blocks x (qkv, out, fc1, fc2) and the tied LM head
  EXPECT_EQ(c.layers.back().name, "head.lm");
  EXPECT_EQ(products_in_fp8(c.layers), 3 * 17);
  EXPECT_TRUE(c.notes.empty()) << c.notes.front();
}

// GPT-2 124M at 16 x 1024 tokens: the attention output projection (768 x 768) gains less in fp8
// than its casts cost and stays in bf16, said once per product; the LM head runs in fp8.
TEST(Fp8LayerChoice, MidSizedLayersChooseProductByProduct) {
  const Choice c = choose(test::causal_lm(768, 12, 3072, 12, 50304, 16, 1024));
  ASSERT_EQ(c.layers.size(), 49u);
  int outs = 0;
  for (const Fp8Layer& l : c.layers) {
    if (l.name.ends_with(".attn.out")) {
      EXPECT_FALSE(l.any()) << l.name;
      ++outs;
    }
    if (l.name == "head.lm") {
      EXPECT_TRUE(l.forward && l.input_grad && l.weight_grad);
    }
  }
  EXPECT_EQ(outs, 12);
  int out_notes = 0;
  for (const std::string& n : c.notes) out_notes += n.find("layers.*.attn ") != std::string::npos;
  EXPECT_GE(out_notes, 3) << "the out projection's three products, each said once";
}

// A small model at 64 tokens a step: its GEMMs sit at the launch floor, where fp8's casts cost
// more than its rate saves; every product stays in bf16, each group said once with its reason.
TEST(Fp8LayerChoice, SmallLayersStayInBf16WithTheirReason) {
  const Choice c = choose(test::causal_lm(64, 4, 256, 2, 512, 1, 64));
  ASSERT_EQ(c.layers.size(), 9u);
  EXPECT_EQ(products_in_fp8(c.layers), 0);
  ASSERT_FALSE(c.notes.empty());
  EXPECT_LE(c.notes.size(), 15u);  // at most one per group: 5 layer kinds x 3 products
  EXPECT_NE(c.notes.front().find("stays in bf16"), std::string::npos) << c.notes.front();
}

// A product no traced group holds keeps the flag it had.
TEST(Fp8LayerChoice, ProductsNoGroupHoldsKeepTheirFlag) {
  std::vector<Fp8Layer> layers = {{0, "layers.0.mlp.fc1", 256, 64}};
  EXPECT_TRUE(choose_fp8_products({}, GemmModel(h200(), Precision::Fp8),
                                  GemmModel(h200(), Precision::Bf16), 64, layers)
                  .empty());
  EXPECT_EQ(products_in_fp8(layers), 3);
}

}  // namespace
}  // namespace hwt
