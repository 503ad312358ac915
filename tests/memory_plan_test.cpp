// hwt memory: the plan's bytes against the parameter count times each stage's width, the TT
// model against its dense twin, budgets, and the command's JSON.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "backend/trace/trace_backend.h"
#include "cli_util.h"
#include "model/model.h"
#include "workload/memory_plan.h"

namespace hwt {
namespace {

// configs/tt_tiny.toml (its TT token table has 1200 rows) at a small step.
StepSpec tt_tiny(std::vector<std::string> sets = {}) {
  sets.push_back("model.vocab_size=1200");
  return step_spec(load_run_config("tt_tiny", sets), 4, 16);
}

StepSpec dense_tiny(std::vector<std::string> sets = {}) {
  StepSpec s = tt_tiny(std::move(sets));
  s.config.model.tt = {};
  return s;
}

// Elements the ParamStore stores for the step's model (padding included).
double stored_elements(const StepSpec& s) {
  TraceBackend be;
  return static_cast<double>(Model(s.config.model, be).params().count());
}

void expect_widths(const StepSpec& s, double param_width, double state_width) {
  const MemoryPlan p = plan_memory(s);
  const double n = stored_elements(s);
  EXPECT_EQ(p.total[MemoryStage::Parameters], n * param_width);
  EXPECT_EQ(p.total[MemoryStage::Gradients], n * 4);
  EXPECT_EQ(p.total[MemoryStage::OptimizerState], n * state_width);
}

TEST(MemoryPlan, ModelStagesAreTheStoredElementsTimesTheirWidths) {
  // fp32 masters, plus a bf16 copy in bf16; fp32 gradients; AdamW 2, Adan 4, SGD 1 fp32 buffers.
  expect_widths(dense_tiny({"train.precision=fp32"}), 4, 8);
  expect_widths(dense_tiny({"train.precision=bf16"}), 6, 8);
  expect_widths(tt_tiny({"train.precision=bf16"}), 6, 8);
  expect_widths(tt_tiny({"train.precision=fp32", "optim.name=adan"}), 4, 16);
  expect_widths(dense_tiny({"optim.name=sgd"}), 4, 4);
}

TEST(MemoryPlan, StepStagesAreTheArenaAndEverythingIsCounted) {
  const StepSpec s = tt_tiny();
  const MemoryPlan p = plan_memory(s);
  TraceBackend be;
  Model m(s.config.model, be, activation_dtype(s.config.train.precision));
  m.plan(s.batch, s.seq);
  // Besides the arena, the TT token table's backward scratch: 4·16 rows of slice gradients, f32,
  // of 1·2·4 + 4·4·4 + 4·4·1 = 88 elements (ranks 1, 4, 4, 1; hidden factors 2, 4, 4).
  EXPECT_EQ(p.total[MemoryStage::Activations] + p.total[MemoryStage::Intermediates],
            static_cast<double>(m.activation_bytes()) + 64 * 88 * 4);
  EXPECT_GT(p.total[MemoryStage::Intermediates], 0);  // the TT contractions' products among them
  EXPECT_GE(p.other, 0);
  EXPECT_LT(p.other, 64);  // the gradient norm's 4 bytes
  EXPECT_EQ(p.allocated, p.total.total() + p.other);
  ASSERT_GE(p.layers.size(), 4u);
  EXPECT_EQ(p.layers.front().layer, "embedding");
  EXPECT_EQ(p.layers[1].layer, "layers.0.attn");
  EXPECT_EQ(p.layers[2].layer, "layers.0.mlp");
}

TEST(MemoryPlan, TensorTrainIsSmallerThanDense) {
  const MemoryPlan tt = plan_memory(tt_tiny()), dense = plan_memory(dense_tiny());
  EXPECT_TRUE(tt.tensor_train);
  EXPECT_FALSE(dense.tensor_train);
  EXPECT_LT(tt.parameters, dense.parameters);
  for (MemoryStage st :
       {MemoryStage::Parameters, MemoryStage::Gradients, MemoryStage::OptimizerState})
    EXPECT_LT(tt.total[st], dense.total[st]) << memory_stage_name(st);
  EXPECT_LT(tt.allocated, dense.allocated);
}

TEST(MemoryPlan, BudgetOverflowsAtTheFirstStageThatDoesNotFit) {
  const MemoryPlan p = plan_memory(tt_tiny());
  const BudgetCheck small = check_budget(p, p.total[MemoryStage::Parameters] - 1);
  ASSERT_TRUE(small.overflow.has_value());
  EXPECT_EQ(*small.overflow, MemoryStage::Parameters);
  const double model = p.total[MemoryStage::Parameters] + p.total[MemoryStage::Gradients] +
                       p.total[MemoryStage::OptimizerState];
  const BudgetCheck model_only = check_budget(p, model);
  ASSERT_TRUE(model_only.overflow.has_value());
  EXPECT_EQ(*model_only.overflow, MemoryStage::Activations);
  const BudgetCheck big = check_budget(p, 1e12);
  EXPECT_FALSE(big.overflow.has_value());
  EXPECT_EQ(big.needed, p.total.total());
}

TEST(MemoryCommand, JsonHasThePlanThePrecisionsAndTheBudget) {
  test::TempDir dir{"memory_json"};
  const test::CliResult r = test::run_hwt(
      "memory --config tt_tiny --set model.vocab_size=1200 --batch 4 --seq 16 --precision bf16 "
      "--budget 6MB,22.5MB --json",
      dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["precision"], "bf16");
  EXPECT_TRUE(j["plan"]["tensor_train"].get<bool>());
  EXPECT_GT(j["plan"]["layers"].size(), 3u);
  EXPECT_GT(j["plan"]["gpu_bytes"].get<double>(), j["plan"]["allocated"].get<double>());
  ASSERT_EQ(j["precisions"].size(), 2u);  // fp32 and bf16
  for (const auto& col : j["precisions"])
    EXPECT_LT(col["model"]["allocated"].get<double>(), col["dense"]["allocated"].get<double>());
  EXPECT_EQ(j["budget"]["capacity"].get<double>(), 28.5e6);
  EXPECT_TRUE(j["budget"]["fits"].get<bool>());
}

}  // namespace
}  // namespace hwt
