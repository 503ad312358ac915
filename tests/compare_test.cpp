// hwt compare: run folders read, metrics min-max normalised, scored under the thesis's weight
// sets and ranked; runs that cannot be compared refused; metrics some run lacks left out.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "analysis/compare_plan.h"
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
  std::string quality_name = "accuracy";  // on the test split; empty: no evaluation
  double quality = 0.9;
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
      {"results", f.quality_name.empty()
                      ? nlohmann::json{{"steps", 1000}}
                      : nlohmann::json{{"steps", 1000},
                                       {"valid", {{"loss", 1.0}, {f.quality_name, 0.5}}},
                                       {"test", {{"loss", 1.0}, {f.quality_name, f.quality}}}}},
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
  EXPECT_DOUBLE_EQ(*r.metrics[4], 0.9);  // the test split's, not the validation split's
  EXPECT_EQ(r.quality_name, "accuracy");
  EXPECT_EQ(r.quality_split, "test");
}

TEST(Compare, ScoresAndRanksAsTheThesisDefinesThem) {
  TempDir root("compare_scores");
  const Comparison c = compare_runs(read_all(root, kThree), thesis_weight_sets(), false);
  ASSERT_EQ(c.sets.size(), 8u);
  EXPECT_TRUE(c.notes.empty());
  EXPECT_TRUE(c.quality_flags.empty());
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
  EXPECT_DOUBLE_EQ(w.w[4], 0.0);  // quality left out: not weighed
  EXPECT_DOUBLE_EQ(parse_weights("0,0,0,0,1").w[4], 1.0);
  for (const char* bad : {"1,2,3", "1,2,3,4,5,6", "1,x,0,0", "-1,0,0,0", "0,0,0,0", "1,,0,0"})
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
  const std::string ranks = test::slurp(root / "out/compare_ranks.svg");
  EXPECT_NE(ranks.find(">custom<"), std::string::npos);
  EXPECT_NE(ranks.find(">#1 ("), std::string::npos);
  EXPECT_NE(ranks.find(">#3 ("), std::string::npos);

  const test::CliResult missing = test::run_hwt("compare " + root / "fp32 " + root / "nope", root);
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("no run.json"), std::string::npos);
  const test::CliResult weights = test::run_hwt("compare " + runs + " --weights 1,2", root);
  EXPECT_EQ(weights.exit_code, 2);
  EXPECT_NE(weights.err.find("four or five weights"), std::string::npos);
}

// Issue 35: the fastest, cheapest run learned less. The thesis's sets rank it first; quality_time
// does not, and it is flagged (1 point of accuracy is the default margin).
TEST(Compare, QualityIsShownWeighedAndFlagged) {
  TempDir root("compare_quality");
  std::vector<FakeRun> runs = kThree;
  runs[0].quality = 0.95;   // fp32
  runs[1].quality = 0.85;   // bf16: fastest, 10 points worse
  runs[2].quality = 0.945;  // tf32: within the margin
  const Comparison c = compare_runs(read_all(root, runs), thesis_weight_sets(), false);
  EXPECT_EQ(c.ranks[0], (std::vector<int>{3, 1, 2}));  // balance ignores quality
  ASSERT_EQ(c.sets[7].name, "quality_time");
  EXPECT_NE(c.ranks[7][1], 1);
  EXPECT_EQ(c.flagged, (std::vector<bool>{false, true, false}));
  ASSERT_EQ(c.quality_flags.size(), 1u);
  EXPECT_NE(c.quality_flags[0].find("bf16: accuracy 85.00%"), std::string::npos)
      << c.quality_flags[0];
  // A wider margin flags nothing.
  EXPECT_TRUE(
      compare_runs(read_all(root, runs), thesis_weight_sets(), false, 0.2).quality_flags.empty());

  const test::CliResult out =
      test::run_hwt("compare " + root / "fp32 " + root / "bf16 " + root / "tf32", root);
  ASSERT_EQ(out.exit_code, 0) << out.err;
  EXPECT_NE(out.out.find("accuracy 85.00% (!)"), std::string::npos) << out.out;
}

// Perplexity: lower is better, so the run with the higher one is flagged and ranks lower.
TEST(Compare, PerplexityCountsLowerAsBetter) {
  TempDir root("compare_ppl");
  std::vector<FakeRun> runs = {kThree[0], kThree[0]};
  runs[1].name = "b";
  for (FakeRun& r : runs) r.quality_name = "perplexity";
  runs[0].quality = 12.0;
  runs[1].quality = 15.0;
  const Comparison c = compare_runs(read_all(root, runs), {parse_weights("0,0,0,0,1")}, false);
  EXPECT_EQ(c.ranks[0], (std::vector<int>{1, 2}));
  EXPECT_EQ(c.flagged, (std::vector<bool>{false, true}));
  // Runs that report different quality metrics cannot be compared.
  runs[1].quality_name = "accuracy";
  EXPECT_THROW(compare_runs(read_all(root, runs), thesis_weight_sets(), false), InputError);
}

// A tiny CPU classifier config and its data, for plans that really train.
void write_tiny_config(const TempDir& dir) {
  dir.write("train.tsv", test::tiny_sentiment_tsv(120, 3));
  dir.write("tiny.toml", "[data]\nformat = \"tsv\"\npath = \"" + dir / "train.tsv" +
                             "\"\nmin_freq = 1\nmax_len = 16\n[model]\nhidden = 16\nheads = 2\n"
                             "ffn = 32\nlayers = 1\nmax_seq = 16\n[train]\ndevice = \"cpu\"\n"
                             "batch_size = 8\nthreads = 1\neval_every = 2\n");
}

TEST(ComparePlan, BudgetsAndSettingsPerRun) {
  TempDir dir("compare_plan_load");
  write_tiny_config(dir);
  dir.write("plan.toml", "base = \"" + dir / "tiny.toml" +
                             "\"\nset = [\"optim.lr=0.002\"]\ntokens = 300\n"
                             "[[run]]\nname = \"adamw\"\n"
                             "[[run]]\nname = \"adan-b4\"\nset = [\"optim.name=adan\", "
                             "\"train.batch_size=4\"]\n");
  const ComparePlan p = load_compare_plan(dir / "plan.toml");
  ASSERT_EQ(p.runs.size(), 2u);
  EXPECT_EQ(p.runs[0].name, "adamw");
  EXPECT_EQ(p.runs[0].config.train.max_steps, 3);  // ceil(300 / (8 x 16))
  EXPECT_EQ(p.runs[1].config.train.max_steps, 5);  // ceil(300 / (4 x 16))
  EXPECT_EQ(p.runs[1].config.optim.name, OptimizerKind::Adan);
  EXPECT_FLOAT_EQ(static_cast<float>(p.runs[1].config.optim.lr), 0.002f);  // the shared setting
}

TEST(ComparePlan, BadPlansAreRefusedWhole) {
  TempDir dir("compare_plan_bad");
  write_tiny_config(dir);
  const std::string base = "base = \"" + dir / "tiny.toml" + "\"\n";
  const std::string two = "[[run]]\nname = \"a\"\n[[run]]\nname = \"b\"\n";
  const std::pair<std::string, std::string> cases[] = {
      {base + two, "steps"},                                          // no budget
      {base + "steps = 2\ntokens = 9\n" + two, "steps"},              // both budgets
      {base + "steps = 0\n" + two, "at least 1"},                     //
      {base + "steps = 2\n[[run]]\nname = \"a\"\n", "at least two"},  //
      {base + "steps = 2\n[[run]]\nname = \"a\"\n[[run]]\nname = \"a\"\n", "twice"},
      {base + "steps = 2\n[[run]]\nname = \"../x\"\n[[run]]\nname = \"b\"\n", "folder"},
      {base + "steps = 2\n[[run]]\nname = \"a\"\nsets = []\n[[run]]\nname = \"b\"\n", "sets"},
      {base + "steps = 2\n[[run]]\nname = \"a\"\nset = [\"train.nope=1\"]\n[[run]]\n"
              "name = \"b\"\n",
       "train.nope"}};
  for (const auto& [text, expect] : cases) {
    dir.write("plan.toml", text);
    try {
      load_compare_plan(dir / "plan.toml");
      ADD_FAILURE() << "accepted:\n" << text;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(expect), std::string::npos) << e.what();
    }
  }
}

TEST(ComparePlan, CommandTrainsEveryRunThenCompares) {
  TempDir dir("compare_plan_cli");
  write_tiny_config(dir);
  dir.write("plan.toml", "base = \"" + dir / "tiny.toml" +
                             "\"\nsteps = 2\n[[run]]\nname = \"adamw\"\n"
                             "[[run]]\nname = \"adan\"\nset = [\"optim.name=adan\"]\n");
  const test::CliResult r = test::run_hwt(
      "compare --plan " + dir / "plan.toml" + " --out " + dir / "out" + " --price 2", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("run 2/2: adan (2 steps)"), std::string::npos) << r.out;
  const nlohmann::json run = nlohmann::json::parse(test::slurp(dir.path() / "out/adan/run.json"));
  EXPECT_EQ(run["results"]["steps"], 2);
  EXPECT_EQ(run["config"]["optim.name"], "adan");
  const std::string csv = test::slurp(dir / "out/compare.csv");
  EXPECT_NE(csv.find("\nadamw,fp32,adamw,8,2,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\nadan,fp32,adan,8,2,"), std::string::npos) << csv;
  // Again into the same folder: refused before anything trains; the runs stay as they were.
  const test::CliResult again =
      test::run_hwt("compare --plan " + dir / "plan.toml" + " --out " + dir / "out", dir);
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_NE(again.err.find("exists"), std::string::npos);
  EXPECT_EQ(test::run_hwt("compare --plan " + dir / "plan.toml", dir).exit_code, 2);  // no --out
  EXPECT_EQ(test::run_hwt("compare", dir).exit_code, 2);  // neither runs nor a plan
}

}  // namespace
}  // namespace hwt
