// hwt estimate: the traced step priced op by op on a cataloged GPU; attention by the rates
// hwt's kernels reach; what it cannot price is said.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/gemm_calibration.h"
#include "analysis/step_estimate.h"
#include "cli_util.h"
#include "shape_test_util.h"

namespace hwt {
namespace {

const GpuCatalog& catalog() {
  static const GpuCatalog c = load_gpu_catalog();
  return c;
}

GemmModel model(const char* gpu, Precision p) {
  const GpuSpec& g = catalog().find(gpu);
  return GemmModel(g, p, resolve_constants(g, p, "").constants);
}

TEST(Estimate, AttentionRatesFollowTheKernelThatRuns) {
  EXPECT_DOUBLE_EQ(attention_peak_fraction(GpuArch::Hopper, Precision::Bf16, 64, false), 0.2338);
  // 40 runs the 64 kernel, 125 the 128 kernel (on padded copies).
  EXPECT_DOUBLE_EQ(attention_peak_fraction(GpuArch::Hopper, Precision::Bf16, 40, true), 0.1570);
  EXPECT_DOUBLE_EQ(attention_peak_fraction(GpuArch::Ampere, Precision::Fp16, 125, false), 0.2646);
  EXPECT_DOUBLE_EQ(attention_peak_fraction(GpuArch::Hopper, Precision::Tf32, 128, true), 0.0402);
  // The generic kernels: exact fp32, TF32 above 128, GPUs before sm_80.
  EXPECT_EQ(attention_peak_fraction(GpuArch::Hopper, Precision::Fp32, 64, false), 0.0);
  EXPECT_EQ(attention_peak_fraction(GpuArch::Hopper, Precision::Tf32, 256, false), 0.0);
  EXPECT_EQ(attention_peak_fraction(GpuArch::Volta, Precision::Fp16, 64, false), 0.0);
}

TEST(Estimate, PricesEachOpOnce) {
  const StepSpec c = test::causal_lm(768, 12, 3072, 2, 50304, 8, 512);
  const Workload w = trace_at(c, Precision::Bf16);
  const GemmModel m = model("H200", Precision::Bf16);
  const StepEstimate e = estimate_step(w, m);
  double gemm = 0, memory = 0, optimizer = 0, attention = 0;
  const double bw = m.gpu().memory_bandwidth_gbs * 1e9 * m.constants().memory_fraction;
  for (const OpRecord& op : w.ops) {
    if (op.kind == OpKind::Gemm) {
      for (const GemmCall& g : op.gemms) gemm += m.predict(g.shape).seconds;
    } else if (op.kind == OpKind::Attention) {
      const double f = attention_peak_fraction(GpuArch::Hopper, Precision::Bf16, 64,
                                               op.phase == Phase::Backward);
      attention += 0.5 * op.gemm_flops() / (989.5e12 * f);  // causal: half the products
    } else {
      (op.phase == Phase::Optimizer ? optimizer : memory) +=
          (op.bytes_read + op.bytes_written) / bw;
    }
  }
  EXPECT_NEAR(e.gemm_s, gemm, 1e-12);
  EXPECT_NEAR(e.attention_s, attention, 1e-12);
  EXPECT_NEAR(e.memory_s, memory, 1e-12);
  EXPECT_NEAR(e.optimizer_s, optimizer, 1e-12);
  const double modelled = gemm + attention + memory + optimizer;
  EXPECT_NEAR(
      e.overhead_s,
      (kSustainedRateFactor - 1) * modelled + kOpGapSeconds * static_cast<double>(w.ops.size()),
      1e-12);
  EXPECT_NEAR(e.seconds(), modelled + e.overhead_s, 1e-12);
  EXPECT_GT(e.attention_s, 0);
  EXPECT_GT(e.optimizer_s, 0);
  ASSERT_EQ(e.slowest.size(), 3u);
  EXPECT_GE(e.slowest[0].seconds, e.slowest[1].seconds);
  EXPECT_GE(e.slowest[1].seconds, e.slowest[2].seconds);
  EXPECT_EQ(e.slowest[0].name.find("layers.*"), e.slowest[0].name.find("layers."));
  EXPECT_TRUE(e.notes.empty());
}

TEST(Estimate, NonCausalAttentionCostsTwiceAndSlowPathsAreSaid) {
  StepSpec c = test::causal_lm(768, 12, 3072, 2, 50304, 8, 512);
  const GemmModel m = model("H200", Precision::Bf16);
  const double causal = estimate_step(trace_at(c, Precision::Bf16), m).attention_s;
  c.config.model.causal = false;  // a classifier: an LM must be causal
  c.config.model.head = Task::Classify;
  c.config.model.num_labels = 2;
  EXPECT_NEAR(estimate_step(trace_at(c, Precision::Bf16), m).attention_s, 2 * causal, 1e-12);
  const StepEstimate v100 =
      estimate_step(trace_at(c, Precision::Fp16), model("V100", Precision::Fp16));
  ASSERT_EQ(v100.notes.size(), 1u);
  EXPECT_NE(v100.notes[0].find("lower bound"), std::string::npos);
}

TEST(Estimate, PowerRisesWithTheShareOfTensorCoreWork) {
  StepEstimate e;
  e.memory_s = 1;
  EXPECT_DOUBLE_EQ(e.power_fraction(), kPowerAtNoTensorWork);
  e.gemm_s = 3;  // three quarters of the step in GEMMs
  EXPECT_DOUBLE_EQ(e.power_fraction(), kPowerAtNoTensorWork + 0.75 * kPowerPerTensorShare);
  e.memory_s = 0;
  EXPECT_LE(e.power_fraction(), 1.0);
  EXPECT_DOUBLE_EQ(StepEstimate{}.power_fraction(), kPowerAtNoTensorWork);
}

TEST(Estimate, CommandPrintsEveryGpuAndFailsCleanly) {
  test::TempDir tmp("estimate_cli");
  const test::CliResult ok =
      test::run_hwt("estimate --config bert_base --gpu h200 --gpu a100-80gb --json", tmp);
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  const nlohmann::json j = nlohmann::json::parse(ok.out);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["gpu"], "H200");
  EXPECT_GT(j[1]["step_s"].get<double>(), j[0]["step_s"].get<double>());  // the A100 is slower
  // Power between the fitted floor and the TDP, energy = power × step time.
  const double watts = j[0]["power_w"].get<double>();
  EXPECT_GT(watts, 700 * kPowerAtNoTensorWork);
  EXPECT_LE(watts, 700);
  EXPECT_NEAR(j[0]["energy_j"].get<double>(), watts * j[0]["step_s"].get<double>(), 1e-9);
  const test::CliResult table = test::run_hwt("estimate --config gpt2_124m --gpu h200", tmp);
  EXPECT_EQ(table.exit_code, 0);
  EXPECT_NE(table.out.find("slowest ops"), std::string::npos);
  EXPECT_EQ(test::run_hwt("estimate --config bert_base --gpu nope", tmp).exit_code, 2);
  EXPECT_EQ(test::run_hwt("estimate --config bert_base --precision fp4", tmp).exit_code, 2);
  EXPECT_EQ(test::run_hwt("estimate --config bert_base --gpu ,", tmp).exit_code, 2);
  // The old spelling, a comma-separated list, still gives each GPU a row, with a warning.
  const test::CliResult listed =
      test::run_hwt("estimate --config bert_tiny --gpu h200,l4 --json", tmp);
  EXPECT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_NE(listed.err.find("is deprecated"), std::string::npos) << listed.err;
  EXPECT_EQ(nlohmann::json::parse(listed.out).size(), 2u) << listed.out;
}

// The "$/1M tok" column: three significant figures, so that GPUs whose costs differ only past
// a tenth of a cent still differ in the table.
TEST(Estimate, CostPerMillionTokensHasThreeSignificantFigures) {
  test::TempDir tmp("estimate_cost");
  const test::CliResult r =
      test::run_hwt("estimate --config bert_tiny --gpu h200 --gpu a100-80gb --gpu l4", tmp);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(r.out);
  std::string line;
  int rows = 0;
  std::set<std::string> costs;
  while (std::getline(lines, line) && !line.starts_with("slowest ops")) {
    std::istringstream cells(line);
    std::vector<std::string> c;
    for (std::string cell; cells >> cell;) c.push_back(cell);
    if (c.size() != 12 || (c[0] != "H200" && c[0] != "A100-80GB" && c[0] != "L4")) continue;
    ++rows;
    const std::string& cost = c[11];
    const size_t first = cost.find_first_not_of("0.");
    ASSERT_NE(first, std::string::npos) << line;
    std::string figures = cost.substr(first);
    std::erase(figures, '.');
    EXPECT_EQ(figures.size(), 3u) << cost << " in: " << line;
    costs.insert(cost);
  }
  EXPECT_EQ(rows, 3) << r.out;
  EXPECT_EQ(costs.size(), 3u) << "the three GPUs' costs differ: " << r.out;
}

// A GPU without the config's bf16 (the T4) is estimated at fp16, the precision one trains in
// there, and its row says so; the other GPUs keep bf16.
TEST(Estimate, AGpuWithoutBf16IsEstimatedAtFp16) {
  test::TempDir tmp("estimate_fp16");
  const std::string gpt2 = "estimate --config gpt2_124m ";
  const test::CliResult mixed =
      test::run_hwt(gpt2 + "--gpu h200 --gpu a100-80gb --gpu t4 --json", tmp);
  ASSERT_EQ(mixed.exit_code, 0) << mixed.err;
  const nlohmann::json j = nlohmann::json::parse(mixed.out);
  ASSERT_EQ(j.size(), 3u);
  EXPECT_EQ(j[0]["precision"], "bf16");
  EXPECT_EQ(j[1]["precision"], "bf16");
  EXPECT_EQ(j[2]["gpu"], "T4");
  EXPECT_EQ(j[2]["precision"], "fp16");
  const std::string note =
      "the T4 has no bf16: estimated at fp16 with dynamic loss scaling (train.precision = "
      "\"fp16\"), as one trains on it";
  ASSERT_FALSE(j[2]["notes"].empty());
  EXPECT_EQ(j[2]["notes"][0], note);
  EXPECT_EQ(j[0]["notes"].dump().find("has no"), std::string::npos) << j[0]["notes"];
  // The same figures as asking for fp16 on the T4 outright.
  const test::CliResult fp16 = test::run_hwt(gpt2 + "--gpu t4 --precision fp16 --json", tmp);
  ASSERT_EQ(fp16.exit_code, 0) << fp16.err;
  EXPECT_EQ(nlohmann::json::parse(fp16.out)[0]["step_s"], j[2]["step_s"]);
  const test::CliResult table = test::run_hwt(gpt2 + "--gpu h200 --gpu a100-80gb --gpu t4", tmp);
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("\nT4 (fp16) "), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("note: " + note + "\n"), std::string::npos) << table.out;
}

// fp8 (train.precision = "fp8") is priced as hwt trains it: the linear products the GPU's shape
// model chooses at the fp8 rate, with their operands' casts, and attention and the other ops as
// in bf16. A GPU without fp8 is estimated at bf16, as one trains on it there.
TEST(Estimate, Fp8PricesTheChosenProductsAtFp8) {
  test::TempDir tmp("estimate_fp8");
  const std::string llama = "estimate --config llama3.2_1b --batch 4 --json ";
  const test::CliResult bf16 = test::run_hwt(llama + "--gpu h200 --gpu a100-80gb", tmp);
  const test::CliResult fp8 =
      test::run_hwt(llama + "--gpu h200 --gpu a100-80gb --precision fp8", tmp);
  ASSERT_EQ(bf16.exit_code, 0) << bf16.err;
  ASSERT_EQ(fp8.exit_code, 0) << fp8.err;
  const nlohmann::json b = nlohmann::json::parse(bf16.out), e = nlohmann::json::parse(fp8.out);
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0]["precision"], "fp8");
  // Llama-3.2-1B at 4 x 2048 tokens: every product of its 65 linear layers (16 blocks of four
  // and the tied LM head) gains in fp8 on an H200 (tests/fp8_layer_choice_test.cpp).
  ASSERT_FALSE(e[0]["notes"].empty());
  EXPECT_EQ(e[0]["notes"][0].get<std::string>().rfind(
                "fp8: 195 of the 195 linear-layer products run in fp8", 0),
            0u)
      << e[0]["notes"];
  const auto seconds = [](const nlohmann::json& row, const char* key) {
    return row[key].get<double>();
  };
  // fp8's tensor cores run at twice bf16's rate; the GEMMs lose at least a quarter of their time.
  EXPECT_LT(seconds(e[0], "gemm_s"), 0.75 * seconds(b[0], "gemm_s"));
  // The same attention ops priced the same way (the sums differ only in rounding).
  EXPECT_NEAR(seconds(e[0], "attention_s"), seconds(b[0], "attention_s"),
              1e-9 * seconds(b[0], "attention_s"));
  EXPECT_GT(seconds(e[0], "memory_s"), seconds(b[0], "memory_s")) << "the casts move bytes";
  EXPECT_LT(seconds(e[0], "step_s"), seconds(b[0], "step_s"));
  // The A100 has no fp8: its row is the bf16 one, with a note.
  EXPECT_EQ(e[1]["precision"], "bf16");
  EXPECT_EQ(e[1]["step_s"], b[1]["step_s"]);
  ASSERT_FALSE(e[1]["notes"].empty());
  EXPECT_EQ(e[1]["notes"][0],
            "the A100-80GB has no fp8: estimated at bf16 (train.precision = \"bf16\"), as one "
            "trains on it");
  // Data parallel prices each rank's fp8 step the same way.
  const test::CliResult ranks = test::run_hwt(llama + "--gpu h200 --precision fp8 --gpus 8", tmp);
  EXPECT_EQ(ranks.exit_code, 0) << ranks.err;
}

// A step too small to gain (BERT-tiny) keeps every product in bf16: no casts, the bf16 step's
// GEMM time.
TEST(Estimate, Fp8KeepsASmallStepInBf16) {
  test::TempDir tmp("estimate_fp8_small");
  const std::string small = "estimate --config bert_tiny --json --gpu h200 ";
  const test::CliResult bf16 = test::run_hwt(small + "--precision bf16", tmp);
  const test::CliResult fp8 = test::run_hwt(small + "--precision fp8", tmp);
  ASSERT_EQ(bf16.exit_code, 0) << bf16.err;
  ASSERT_EQ(fp8.exit_code, 0) << fp8.err;
  const nlohmann::json b = nlohmann::json::parse(bf16.out)[0],
                       e = nlohmann::json::parse(fp8.out)[0];
  EXPECT_EQ(e["notes"][0].get<std::string>().rfind("fp8: 0 of the 27 ", 0), 0u) << e["notes"];
  EXPECT_NEAR(e["gemm_s"].get<double>(), b["gemm_s"].get<double>(),
              1e-9 * b["gemm_s"].get<double>());
  EXPECT_NEAR(e["memory_s"].get<double>(), b["memory_s"].get<double>(),
              1e-9 * b["memory_s"].get<double>());
}

// train.fp8_products = "all" overrides the choice: the same small step then runs every product
// whose dimensions allow it in fp8, casts and all, and is priced so (the three left out are the
// classifier's: two classes are no multiple of 16).
TEST(Estimate, Fp8ProductsAllRunsEveryProductInFp8) {
  test::TempDir tmp("estimate_fp8_all");
  const std::string small = "estimate --config bert_tiny --json --gpu h200 --precision fp8 ";
  const test::CliResult chosen = test::run_hwt(small, tmp);
  const test::CliResult all = test::run_hwt(small + "--set train.fp8_products=all", tmp);
  ASSERT_EQ(chosen.exit_code, 0) << chosen.err;
  ASSERT_EQ(all.exit_code, 0) << all.err;
  const nlohmann::json c = nlohmann::json::parse(chosen.out)[0],
                       a = nlohmann::json::parse(all.out)[0];
  EXPECT_EQ(a["notes"][0].get<std::string>().rfind("fp8: 24 of the 27 ", 0), 0u) << a["notes"];
  // The casts are memory traffic the chosen step does not have.
  EXPECT_GT(a["memory_s"].get<double>(), c["memory_s"].get<double>());
}

}  // namespace
}  // namespace hwt
