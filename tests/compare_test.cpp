// hwt compare: run folders read, metrics min-max normalised, scored under the thesis's weight
// sets and ranked; runs that cannot be compared refused; metrics some run lacks left out.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "analysis/run_compare.h"
#include "cli_util.h"
#include "core/error.h"

namespace hwt {
namespace {

using test::TempDir;

struct FakeRun {
  std::string name, precision;
  double train_s;
  std::optional<double> cost, energy, util;
  int hidden = 768;
};

// A run.json as hwt train writes it, with only the keys hwt compare reads.
void write_run(const TempDir& root, const FakeRun& f) {
  std::filesystem::create_directories(root.path() / f.name);
  auto num = [](const std::optional<double>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json();
  };
  nlohmann::json j = {
      {"config",
       {{"train.precision", f.precision},
        {"optim.name", "adamw"},
        {"train.batch_size", 16},
        {"model.hidden", f.hidden},
        {"model.layers", 12}}},
      {"data", {{"source", "synthetic"}}},
      {"results", {{"steps", 1000}}},
      {"timing", {{"train_s", f.train_s + 100}}},  // telemetry's training seconds take precedence
      {"telemetry",
       {{"train", {{"seconds", f.train_s}, {"gpu_util_mean_pct", num(f.util)}}},
        {"total",
         {{"seconds", f.train_s + 5},
          {"gpu_energy_j", num(f.energy)},
          {"gpu_energy_null_reason", "the GPU has no energy counter"}}},
        {"cost_usd", {{"train", num(f.cost)}, {"total", num(f.cost)}}}}}};
  root.write(f.name + "/run.json", j.dump());
}

std::vector<RunRecord> read_all(const TempDir& root, const std::vector<FakeRun>& runs) {
  std::vector<RunRecord> out;
  for (const FakeRun& f : runs) {
    write_run(root, f);
    out.push_back(read_run(root / f.name));
  }
  return out;
}

const std::vector<FakeRun> kThree = {{"fp32", "fp32", 300, 0.30, 90000, 95},
                                     {"bf16", "bf16", 100, 0.10, 40000, 80},
                                     {"tf32", "tf32", 150, 0.15, 50000, 90}};

TEST(Compare, ReadsTheMetricsOfARunFolder) {
  TempDir root("compare_read");
  const RunRecord r = read_all(root, {kThree[0]})[0];
  EXPECT_EQ(r.name, "fp32");
  EXPECT_EQ(r.precision, "fp32");
  EXPECT_EQ(r.optimizer, "adamw");
  EXPECT_EQ(r.batch, 16);
  EXPECT_EQ(r.steps, 1000);
  EXPECT_DOUBLE_EQ(*r.metrics[0], 300);  // telemetry's training time, not timing.train_s
  EXPECT_DOUBLE_EQ(*r.metrics[1], 0.30);
  EXPECT_DOUBLE_EQ(*r.metrics[2], 90000);
  EXPECT_DOUBLE_EQ(*r.metrics[3], 95);
}

TEST(Compare, ScoresAndRanksAsTheThesisDefinesThem) {
  TempDir root("compare_scores");
  const Comparison c = compare_runs(read_all(root, kThree), thesis_weight_sets(), false);
  ASSERT_EQ(c.sets.size(), 7u);
  EXPECT_TRUE(c.notes.empty());
  // Normalised: time (300, 100, 150) -> (1, 0, 0.25); cost alike; energy (9, 4, 5) -> (1, 0, 0.2);
  // utilisation (95, 80, 90) -> (1, 0, 2/3).
  EXPECT_DOUBLE_EQ(*c.normalised[2][0], 0.25);
  EXPECT_DOUBLE_EQ(*c.normalised[2][2], 0.2);
  EXPECT_NEAR(*c.normalised[2][3], 2.0 / 3.0, 1e-12);
  // balance (.3, .3, .3, .1): fp32 .3 + .3 + .3 - .1 = .8; bf16 0; tf32 .075 + .075 + .06 - .0667.
  EXPECT_NEAR(c.scores[0][0], 0.8, 1e-12);
  EXPECT_NEAR(c.scores[0][1], 0.0, 1e-12);
  EXPECT_NEAR(c.scores[0][2], 0.21 - 0.1 * 2.0 / 3.0, 1e-12);
  EXPECT_EQ(c.ranks[0], (std::vector<int>{3, 1, 2}));
  // energy_cost (.1, .3, .5, .1) weighs energy most; bf16 still wins, fp32 still last.
  EXPECT_EQ(c.sets[6].name, "energy_cost");
  EXPECT_EQ(c.ranks[6], (std::vector<int>{3, 1, 2}));
}

TEST(Compare, UtilisationCanDecideTheRank) {
  TempDir root("compare_util");
  // Equal time, cost and energy: only utilisation differs, and the busier GPU ranks first.
  const Comparison c = compare_runs(
      read_all(root, {{"a", "bf16", 100, 0.1, 1000, 60}, {"b", "bf16", 100, 0.1, 1000, 90}}),
      thesis_weight_sets(), false);
  for (const auto& rank : c.ranks) EXPECT_EQ(rank, (std::vector<int>{2, 1}));
}

TEST(Compare, AMetricSomeRunLacksIsLeftOutWithItsReason) {
  TempDir root("compare_missing");
  std::vector<FakeRun> runs = kThree;
  runs[1].energy.reset();
  const Comparison c = compare_runs(read_all(root, runs), thesis_weight_sets(), false);
  EXPECT_FALSE(c.used[2]);
  ASSERT_EQ(c.notes.size(), 1u);
  EXPECT_NE(c.notes[0].find("energy"), std::string::npos);
  EXPECT_NE(c.notes[0].find("bf16"), std::string::npos);
  EXPECT_NE(c.notes[0].find("no energy counter"), std::string::npos);
  // balance without energy: fp32 .3 + .3 - .1 = .5.
  EXPECT_NEAR(c.scores[0][0], 0.5, 1e-12);
}

TEST(Compare, RefusesDifferentModelsUnlessForced) {
  TempDir root("compare_models");
  std::vector<FakeRun> runs = {kThree[0], kThree[1]};
  runs[1].hidden = 1024;
  EXPECT_THROW(compare_runs(read_all(root, runs), thesis_weight_sets(), false), InputError);
  EXPECT_EQ(compare_runs(read_all(root, runs), thesis_weight_sets(), true).runs.size(), 2u);
  EXPECT_THROW(compare_runs(read_all(root, {kThree[0]}), thesis_weight_sets(), false), InputError);
}

TEST(Compare, CustomWeights) {
  const WeightSet w = parse_weights("1,0,0,0.5");
  EXPECT_EQ(w.name, "custom");
  EXPECT_DOUBLE_EQ(w.w[0], 1.0);
  EXPECT_DOUBLE_EQ(w.w[3], 0.5);
  for (const char* bad : {"1,2,3", "1,2,3,4,5", "1,x,0,0", "-1,0,0,0", "0,0,0,0", "1,,0,0"})
    EXPECT_THROW(parse_weights(bad), InputError) << bad;
}

TEST(Compare, CommandWritesTablesAndChartsAndFailsCleanly) {
  TempDir root("compare_cli");
  for (const FakeRun& f : kThree) write_run(root, f);
  const std::string runs = root / "fp32" + " " + root / "bf16" + " " + root / "tf32";
  const test::CliResult ok =
      test::run_hwt("compare " + runs + " --weights 1,0,0,0 --out " + root / "out", root);
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("balance"), std::string::npos);
  EXPECT_NE(ok.out.find("custom"), std::string::npos);
  const std::string csv = test::slurp(root / "out/compare.csv");
  EXPECT_NE(csv.find("bf16,bf16,adamw,16,1000,100.0,0.1000,40000,80.0"), std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(test::slurp(root / "out/compare.json"));
  EXPECT_EQ(j["runs"][1]["scores"]["custom"]["rank"], 1);
  EXPECT_NE(test::slurp(root / "out/compare_scores.svg").find("<rect"), std::string::npos);

  const test::CliResult missing = test::run_hwt("compare " + root / "fp32 " + root / "nope", root);
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("no run.json"), std::string::npos);
  const test::CliResult weights = test::run_hwt("compare " + runs + " --weights 1,2", root);
  EXPECT_EQ(weights.exit_code, 2);
  EXPECT_NE(weights.err.find("four weights"), std::string::npos);
}

}  // namespace
}  // namespace hwt
