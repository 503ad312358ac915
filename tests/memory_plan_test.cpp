// hwt memory: the plan's bytes against the parameter count times each stage's width, the TT
// model against its dense twin, budgets, and the command's JSON.
#include <gtest/gtest.h>

#include <fmt/format.h>

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

double stage_sum(const MemoryPlan& p, std::initializer_list<MemoryStage> stages) {
  double b = 0;
  for (MemoryStage s : stages) b += p.total[s];
  return b;
}

TEST(MemoryPlan, ModelStateGoesToBramAndTheStepToUram) {
  EXPECT_EQ(placed_in(MemoryStage::Parameters), OnChipMemory::Bram);
  EXPECT_EQ(placed_in(MemoryStage::Gradients), OnChipMemory::Bram);
  EXPECT_EQ(placed_in(MemoryStage::OptimizerState), OnChipMemory::Bram);
  EXPECT_EQ(placed_in(MemoryStage::Activations), OnChipMemory::Uram);
  EXPECT_EQ(placed_in(MemoryStage::Intermediates), OnChipMemory::Uram);
}

TEST(MemoryPlan, SplitBudgetFillsEachMemoryWithItsOwnStages) {
  const MemoryPlan p = plan_memory(tt_tiny());
  using S = MemoryStage;
  const double model = stage_sum(p, {S::Parameters, S::Gradients, S::OptimizerState});
  const double step = stage_sum(p, {S::Activations, S::Intermediates});
  ASSERT_GT(p.total[S::Intermediates], 1);

  const SplitBudgetCheck exact = check_split_budget(p, model, step);
  EXPECT_FALSE(exact.overflow().has_value());
  EXPECT_EQ(exact.bram.needed, model);
  EXPECT_EQ(exact.uram.needed, step);

  // One byte short in BRAM: the optimizer state, the last stage there, overflows, although the
  // sum of both memories would hold the whole step.
  const SplitBudgetCheck bram_short = check_split_budget(p, model - 1, step + 1e6);
  EXPECT_TRUE(check_budget(p, model - 1 + step + 1e6).overflow == std::nullopt);
  ASSERT_TRUE(bram_short.overflow().has_value());
  EXPECT_EQ(*bram_short.overflow(), S::OptimizerState);
  EXPECT_FALSE(bram_short.uram.overflow.has_value());

  const SplitBudgetCheck no_params = check_split_budget(p, p.total[S::Parameters] - 1, 1e12);
  EXPECT_EQ(no_params.overflow(), S::Parameters);

  // URAM: the activations, or only the intermediates; BRAM's overflow would come first.
  EXPECT_EQ(check_split_budget(p, 1e12, p.total[S::Activations] - 1).overflow(), S::Activations);
  EXPECT_EQ(check_split_budget(p, 1e12, step - 1).overflow(), S::Intermediates);
  EXPECT_EQ(check_split_budget(p, 1, 1).overflow(), S::Parameters);
}

TEST(MemoryCommand, TwoBudgetsAreBramAndUramInJson) {
  const MemoryPlan p = plan_memory(tt_tiny());
  using S = MemoryStage;
  const double model = stage_sum(p, {S::Parameters, S::Gradients, S::OptimizerState});
  const double step = stage_sum(p, {S::Activations, S::Intermediates});
  test::TempDir dir{"memory_split"};
  const test::CliResult r = test::run_hwt(
      fmt::format("memory --config tt_tiny --set model.vocab_size=1200 --batch 4 --seq 16 "
                  "--budget {:.0f}B,{:.0f}B --json",
                  model, step - 1),
      dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json b = nlohmann::json::parse(r.out)["budget"];
  EXPECT_FALSE(b["fits"].get<bool>());
  EXPECT_EQ(b["overflow"], "intermediates");
  ASSERT_EQ(b["memories"].size(), 2u);
  EXPECT_EQ(b["memories"][0]["memory"], "BRAM");
  EXPECT_TRUE(b["memories"][0]["fits"].get<bool>());
  EXPECT_EQ(b["memories"][0]["needed"].get<double>(), model);
  EXPECT_EQ(b["memories"][0]["stages"],
            nlohmann::json({"parameters", "gradients", "optimizer_state"}));
  EXPECT_EQ(b["memories"][1]["memory"], "URAM");
  EXPECT_EQ(b["memories"][1]["overflow"], "intermediates");
  EXPECT_EQ(b["memories"][1]["needed"].get<double>(), step);
}

TEST(MemoryCommand, OneBudgetIsOneMemory) {
  test::TempDir dir{"memory_single"};
  const test::CliResult r = test::run_hwt(
      "memory --config tt_tiny --set model.vocab_size=1200 --batch 4 --seq 16 --budget 1KB", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("budget 1 KB: does not fit: parameters overflow first"), std::string::npos)
      << r.out;
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
  EXPECT_EQ(j["budget"]["memories"][0]["capacity"].get<double>(), 6e6);
}

}  // namespace
}  // namespace hwt
