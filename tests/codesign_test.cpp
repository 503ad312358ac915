// hwt codesign: the search on a synthetic space with an injected accuracy (it must find the
// brute-force optimum), the Gaussian-process surrogate on a known function, resuming from the
// run cache after a kill, space-file errors, and one short end-to-end run of the command.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>

#include "accel/accel_config.h"
#include "accel/design_space.h"
#include "accel/sweep.h"
#include "cli_util.h"
#include "codesign/report.h"
#include "codesign/search.h"
#include "codesign/surrogate.h"
#include "core/error.h"
#include "core/paths.h"
#include "svg_layout_check.h"

namespace hwt::codesign {
namespace {

using test::TempDir;

// 2 x 2 x 2 = 8 designs.
const char* kDesignSpace = R"(name = "small"
[choices]
batch = [4]
tile_b = [1]
tile_xy = [16]
pes = [64, 256]
mac_lanes = [16, 64]
macs_per_lane = [16]
softmax_units = [4]
activation_mb = [4]
weight_mb = [8]
mask_mb = [1]
dataflow = ["bijk"]
memory = [{ type = "lpddr3", banks = 16, ranks = 2, channels = 2 },
          { type = "hbm", banks = 32, ranks = 1, channels = 4 }]
)";

// 2 x 2 x 1 x 2 = 8 shapes.
const char* kModelSpace = R"(name = "synthetic"
[model]
layers = [1, 2]
hidden = [32, 64]
heads = [2]
ffn = [64, 128]
)";

// Larger models are more accurate, by known amounts.
double synthetic_accuracy(const ModelShape& s) {
  return 0.80 + 0.05 * std::log2(s.hidden / 32.0) + 0.02 * (s.layers - 1) +
         0.01 * std::log2(s.ffn / 64.0);
}

class FakeSource : public AccuracySource {
 public:
  TrainedRun run(const ModelShape& s) override {
    calls.push_back(s);
    const double a = synthetic_accuracy(s);
    return {s, a, a, 0.0, 10, 1000, "fake", sparsity};
  }
  std::string settings() const override { return "synthetic"; }
  std::vector<ModelShape> calls;
  std::optional<RunSparsity> sparsity;  // every run's, as if each had pruned
};

// A pruned run's sparsity.json with `fraction` zeros at every training point, read back.
RunSparsity crafted_sparsity(const TempDir& dir, double fraction) {
  nlohmann::json points = nlohmann::json::object();
  for (const char* p : {"grad.attn.qkv", "grad.attn.out", "grad.mlp.fc1", "grad.mlp.fc2",
                        "param_grads", "param_grads.linear"})
    points[p] = {{"zeros", 0}, {"elements", 0}, {"sparsity", fraction}};
  const std::string name = fmt::format("sparsity_{}.json", fraction);
  dir.write(name,
            nlohmann::json{
                {"tau_infer", 0}, {"tau_train", 1e-3}, {"tau_act_grad", 1e-4}, {"points", points}}
                .dump());
  return read_run_sparsity(dir / name);
}

class Codesign : public ::testing::Test {
 protected:
  TempDir dir{"codesign"};
  RunConfig base;
  const accel::HardwareLibrary& lib = accel::default_hardware_library();
  SearchInputs in;

  void SetUp() override {
    base.model.layers = 1;  // the baseline is the smallest shape of the space
    base.model.hidden = 32;
    base.model.heads = 2;
    base.model.ffn = 64;
    dir.write("designs.toml", kDesignSpace);
    dir.write("space.toml", kModelSpace);
    in.space = load_model_space(dir / "space.toml", base);
    in.baseline_shape = shape_of(base.model);
    in.baseline_design =
        accel::load_accel_config(require_shipped_file("hardware/accel/designs/edge.toml"), lib);
    in.baseline_batch = 4;
    const accel::DesignSpace designs = accel::load_design_space(dir / "designs.toml", lib);
    in.make_hardware = [this, designs](int64_t vocab) {
      RunConfig c = base;
      c.model.vocab_size = vocab;
      return HardwareEvaluator(c, designs, lib);
    };
  }
  static SearchOptions small_options(Goal mode, int64_t runs) {
    SearchOptions o;
    o.mode = mode;
    o.runs = runs;
    o.initial = 2;
    o.per_round = 2;
    o.evolve = {32, 40, 7};
    return o;
  }
  // Every pair of the space, scored as the search scores them: the metrics of all, and the
  // pair of the lowest weighted score.
  struct BruteForce {
    std::vector<PairMetrics> all;
    double best = 1e9;
    ModelShape best_shape;
    uint64_t best_design = 0;
  };
  BruteForce brute_force() {
    HardwareEvaluator hw = in.make_hardware(1000);
    const PairMetrics base_metrics{synthetic_accuracy(in.baseline_shape),
                                   hw.evaluate(in.baseline_shape, in.baseline_design, 4)};
    BruteForce b;
    for (const ModelShape& s : in.space.all())
      for (uint64_t d = 0; d < hw.space().size(); ++d) {
        const PairMetrics m{synthetic_accuracy(s), hw.evaluate(s, d)};
        b.all.push_back(m);
        const double score = weighted_score(m, base_metrics);
        if (score < b.best) {
          b.best = score;
          b.best_shape = s;
          b.best_design = d;
        }
      }
    return b;
  }
  SearchResult search(FakeSource& src, const SearchOptions& o,
                      const SearchProgress& progress = {}) {
    RunCache cache(dir / "runs.jsonl", src.settings());
    return run_search(in, src, cache, o, nullptr, progress);
  }
};

TEST_F(Codesign, FindsTheBruteForceOptimumAndFront) {
  const BruteForce truth = brute_force();
  ASSERT_FALSE(truth.best_shape == in.baseline_shape);
  for (Goal mode : {Goal::Weighted, Goal::Pareto}) {
    std::filesystem::remove(dir / "runs.jsonl");
    FakeSource src;
    const SearchResult r = search(src, small_options(mode, 8));  // every shape
    ASSERT_EQ(src.calls.size(), 8u);
    EXPECT_EQ(r.stopped_by, "runs");
    EXPECT_EQ(r.chosen.shape, truth.best_shape)
        << r.chosen.shape.key() << " vs " << truth.best_shape.key();
    EXPECT_EQ(r.chosen.design_index, static_cast<int64_t>(truth.best_design));
    EXPECT_NEAR(r.chosen.score, truth.best, 1e-12);
    EXPECT_NEAR(r.baseline.score, 1.0, 1e-12);
    EXPECT_LT(r.chosen.score, 1.0);

    // The front holds exactly the pairs that no pair of the space dominates.
    EXPECT_EQ(r.front.size(), non_dominated(truth.all).size());
    for (const ReportedPair& p : r.front) {
      std::vector<PairMetrics> with = truth.all;
      with.push_back(p.metrics);
      const std::vector<size_t> nd = non_dominated(with);
      EXPECT_TRUE(std::find(nd.begin(), nd.end(), truth.all.size()) != nd.end()) << p.shape.key();
    }
  }
}

TEST_F(Codesign, SurrogateGuidedRoundsTrainTheOptimumWithinBudget) {
  dir.write("wide.toml",
            "[model]\nlayers = [1, 2, 3, 4]\nhidden = [32, 64, 128]\nheads = [2]\n"
            "ffn = [64, 128, 256]\n");
  in.space = load_model_space(dir / "wide.toml", base);
  const BruteForce truth = brute_force();
  FakeSource src;
  // 12 of the 36 shapes: the baseline, two random ones, then rounds of two proposals; the
  // surrogate has to point at the best one.
  const SearchResult r = search(src, small_options(Goal::Weighted, 12));
  EXPECT_EQ(src.calls.size(), 12u);
  EXPECT_EQ(r.stopped_by, "runs");
  EXPECT_TRUE(std::find(src.calls.begin(), src.calls.end(), truth.best_shape) != src.calls.end())
      << truth.best_shape.key() << " never trained";
  EXPECT_EQ(r.chosen.shape, truth.best_shape);
  // Every round after the first reports the surrogate's error on shapes it had not seen.
  ASSERT_GE(r.rounds.size(), 2u);
  for (size_t i = 1; i < r.rounds.size(); ++i) {
    EXPECT_EQ(r.rounds[i].predicted.size(), r.rounds[i].shapes.size());
    EXPECT_LT(r.rounds[i].mae, 0.1);
  }
}

TEST_F(Codesign, ResumesFromTheCacheWithoutRetraining) {
  FakeSource first;
  const SearchResult full = search(first, small_options(Goal::Pareto, 7));
  // A kill after the fourth run leaves four whole lines (each run rewrites the file atomically).
  std::ifstream in_file(dir / "runs.jsonl");
  std::string line, kept;
  for (int i = 0; i < 4 && std::getline(in_file, line); ++i) kept += line + "\n";
  in_file.close();
  dir.write("runs.jsonl", kept);

  FakeSource second;
  const SearchResult resumed = search(second, small_options(Goal::Pareto, 7));
  EXPECT_EQ(resumed.cached, 4);
  EXPECT_EQ(resumed.trained, 3);
  ASSERT_EQ(second.calls.size(), 3u);
  for (size_t i = 0; i < 4; ++i)
    EXPECT_TRUE(std::find(second.calls.begin(), second.calls.end(), first.calls[i]) ==
                second.calls.end())
        << first.calls[i].key() << " was trained again";
  // Same seed, same accuracies: the resumed search takes the same path to the same answer.
  ASSERT_EQ(resumed.runs.size(), full.runs.size());
  for (size_t i = 0; i < full.runs.size(); ++i)
    EXPECT_EQ(resumed.runs[i].shape, full.runs[i].shape);
  EXPECT_EQ(resumed.chosen.shape, full.chosen.shape);
  EXPECT_EQ(resumed.chosen.design_index, full.chosen.design_index);

  // A third start finds everything cached; the progress counts cached runs too, up to the
  // budget, in order.
  FakeSource third;
  std::vector<std::pair<int64_t, int64_t>> progress;
  EXPECT_EQ(search(third, small_options(Goal::Pareto, 7),
                   [&](int64_t done, int64_t total) { progress.emplace_back(done, total); })
                .cached,
            7);
  EXPECT_TRUE(third.calls.empty());
  ASSERT_EQ(progress.size(), 7u);
  for (size_t i = 0; i < progress.size(); ++i)
    EXPECT_EQ(progress[i], std::make_pair(static_cast<int64_t>(i + 1), int64_t{7}));
}

TEST_F(Codesign, TimeBudgetStopsNewRunsButFinishesTheSearch) {
  FakeSource src;
  SearchOptions o = small_options(Goal::Pareto, 8);
  o.time_budget_s = 1e-9;  // spent once the baseline has run
  const SearchResult r = search(src, o);
  EXPECT_EQ(src.calls.size(), 1u);
  EXPECT_EQ(r.stopped_by, "time");
  EXPECT_EQ(r.chosen.shape, in.baseline_shape);  // the only shape with an accuracy
  EXPECT_FALSE(r.front.empty());
}

TEST_F(Codesign, CacheRefusesOtherSettingsAndMalformedLines) {
  FakeSource src;
  search(src, small_options(Goal::Pareto, 3));
  try {
    RunCache(dir / "runs.jsonl", "other");
    FAIL() << "other settings accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("other settings"), std::string::npos) << e.what();
  }
  dir.write("bad.jsonl", "{\"settings\": \"synthetic\", \"shape\": 3}\n");
  EXPECT_THROW(RunCache(dir / "bad.jsonl", "synthetic"), InputError);
}

// A shape whose run measured its sparsity is simulated with exactly that sparsity (a heavier
// one costs less), every other shape with AccelTran's constants.
TEST_F(Codesign, EvaluatorSimulatesAShapeWithItsRunsMeasuredSparsity) {
  HardwareEvaluator hw = in.make_hardware(1000);
  const ModelShape shape = in.space.shape(3), other = in.space.shape(0);
  const uint64_t design = 5;
  const HwMetrics constants = hw.evaluate(shape, design);
  EXPECT_EQ(hw.sparsity_source(shape), "AccelTran's constants");
  const RunSparsity light = crafted_sparsity(dir, 0.1), heavy = crafted_sparsity(dir, 0.95);
  hw.use_measured(shape, light);
  const HwMetrics l = hw.evaluate(shape, design);
  hw.use_measured(shape, heavy);
  const HwMetrics h = hw.evaluate(shape, design);
  EXPECT_EQ(hw.sparsity_source(shape), "measured in " + (dir / "sparsity_0.95.json"));

  int64_t batch = 0;
  const accel::AccelConfig d = hw.space().design(design, &batch);
  RunConfig c = shape.apply(base);
  c.model.vocab_size = 1000;
  const accel::SweepPoint want = accel::evaluate_design(
      d, batch,
      accel::trace_sim_workload(c, batch, 0, TraceMode::Train, accel::Sparsity::measured_in(heavy)),
      lib);
  EXPECT_DOUBLE_EQ(h.latency_s, want.latency_per_seq());
  EXPECT_DOUBLE_EQ(h.dynamic_j, want.dynamic_j / static_cast<double>(batch));
  EXPECT_LT(h.latency_s, l.latency_s);
  EXPECT_LT(h.energy_j(), l.energy_j());
  EXPECT_NE(l.latency_s, constants.latency_s);
  EXPECT_EQ(h.area_mm2, constants.area_mm2);  // sparsity changes the work, not the chip

  EXPECT_EQ(hw.sparsity_source(other), "AccelTran's constants");
  EXPECT_DOUBLE_EQ(hw.evaluate(other, design).latency_s,
                   in.make_hardware(1000).evaluate(other, design).latency_s);
}

// A search whose runs pruned reports every pair with its run's sparsity, keeps that sparsity in
// the cache, and a resumed search simulates the cached runs with it (the source now measures
// nothing): the same pairs, the same numbers.
TEST_F(Codesign, RunsKeepTheirMeasuredSparsityThroughTheCache) {
  FakeSource pruned;
  pruned.sparsity = crafted_sparsity(dir, 0.95);
  const SearchResult first = search(pruned, small_options(Goal::Pareto, 5));
  const std::string source = "measured in " + (dir / "sparsity_0.95.json");
  EXPECT_EQ(first.chosen.sparsity, source);
  EXPECT_EQ(first.baseline.sparsity, source);
  for (const ReportedPair& p : first.front) EXPECT_EQ(p.sparsity, source) << p.shape.key();

  HardwareEvaluator hw = in.make_hardware(1000);
  hw.use_measured(first.chosen.shape, *pruned.sparsity);
  EXPECT_DOUBLE_EQ(first.chosen.metrics.hw.latency_s,
                   hw.evaluate(first.chosen.shape, first.chosen.design_index).latency_s);
  EXPECT_NE(
      first.chosen.metrics.hw.latency_s,
      in.make_hardware(1000).evaluate(first.chosen.shape, first.chosen.design_index).latency_s);

  const RunCache cache(dir / "runs.jsonl", "synthetic");
  ASSERT_EQ(cache.runs().size(), 5u);
  for (const TrainedRun& r : cache.runs()) {
    ASSERT_TRUE(r.sparsity) << r.shape.key();
    EXPECT_EQ(r.sparsity->path, dir / "sparsity_0.95.json");
    EXPECT_EQ(r.sparsity->thresholds.tau_train, 1e-3);
    EXPECT_EQ(r.sparsity->fraction, pruned.sparsity->fraction);
  }

  FakeSource unpruned;
  const SearchResult resumed = search(unpruned, small_options(Goal::Pareto, 5));
  EXPECT_TRUE(unpruned.calls.empty());
  EXPECT_EQ(resumed.chosen.shape, first.chosen.shape);
  EXPECT_EQ(resumed.chosen.design_index, first.chosen.design_index);
  EXPECT_EQ(resumed.chosen.sparsity, source);
  EXPECT_DOUBLE_EQ(resumed.chosen.metrics.hw.latency_s, first.chosen.metrics.hw.latency_s);
  EXPECT_DOUBLE_EQ(resumed.baseline.metrics.hw.energy_j(), first.baseline.metrics.hw.energy_j());
}

// Cache lines written before runs kept their sparsity still load (without one: constants); a
// bad sparsity in a line is one error naming the line.
TEST_F(Codesign, CacheLoadsLinesWithoutSparsityAndRejectsBadOnes) {
  FakeSource src;
  src.sparsity = crafted_sparsity(dir, 0.5);
  nlohmann::json with = to_json(src.run(in.space.shape(1)));
  with["settings"] = "synthetic";
  nlohmann::json old = with;
  old.erase("sparsity");
  old["shape"]["layers"] = 2;
  dir.write("mixed.jsonl", old.dump() + "\n" + with.dump() + "\n");
  const RunCache cache(dir / "mixed.jsonl", "synthetic");
  ASSERT_EQ(cache.runs().size(), 2u);
  EXPECT_FALSE(cache.runs()[0].sparsity);
  ASSERT_TRUE(cache.runs()[1].sparsity);
  EXPECT_EQ(cache.runs()[1].sparsity->fraction, src.sparsity->fraction);

  with["sparsity"]["points"]["param_grads"]["sparsity"] = 1.5;
  dir.write("bad.jsonl", old.dump() + "\n" + with.dump() + "\n");
  try {
    RunCache(dir / "bad.jsonl", "synthetic");
    FAIL() << "bad sparsity accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.jsonl:2: points.param_grads.sparsity 1.5"),
              std::string::npos)
        << e.what();
  }
}

TEST(CodesignSurrogate, FitsAKnownFunctionWithBoundedError) {
  auto f = [](const std::vector<double>& x) {
    return 0.9 + 0.04 * x[0] - 0.03 * (x[1] - 0.5) * (x[1] - 0.5) + 0.02 * std::sin(2 * x[2]) +
           0.01 * x[3] * x[0];
  };
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(0, 1);
  auto point = [&] { return std::vector<double>{u(rng), u(rng), u(rng), u(rng)}; };
  std::vector<std::vector<double>> x;
  std::vector<double> y;
  for (int i = 0; i < 40; ++i) {
    x.push_back(point());
    y.push_back(f(x.back()));
  }
  GaussianProcess gp;
  gp.fit(x, y);
  double abs_error = 0, worst = 0;
  for (int i = 0; i < 200; ++i) {
    const std::vector<double> p = point();
    const double e = std::abs(gp.predict(p).mean - f(p));
    abs_error += e;
    worst = std::max(worst, e);
  }
  // The function spans about 0.07; the surrogate is off by a small fraction of that.
  EXPECT_LT(abs_error / 200, 0.002);
  EXPECT_LT(worst, 0.01);
  // Certain where it has seen data, less so far from it.
  EXPECT_LT(gp.predict(x[0]).std, 0.003);
  EXPECT_GT(gp.predict({3, 3, 3, 3}).std, 10 * gp.predict(x[0]).std);
}

// The whole message: the file, then `after_path` (": the reason", or a position and the reason).
void expect_space_error(const std::string& text, const std::string& after_path) {
  TempDir d{"codesign_space"};
  d.write("s.toml", text);
  try {
    load_model_space(d / "s.toml", RunConfig{});
    FAIL() << "accepted: " << text;
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "codesign space " + (d / "s.toml") + after_path);
  }
}

TEST(CodesignSpace, RejectsBadFiles) {
  const std::string ok = "[model]\nlayers = [1]\nhidden = [64]\nheads = [2]\nffn = [128]\n";
  expect_space_error(ok + "widths = [3]\n", ": model.widths is not a known key");
  expect_space_error("[model]\nlayers = []\nhidden = [64]\nheads = [2]\nffn = [128]\n",
                     ": model.layers must not be an empty list");
  expect_space_error("[model]\nlayers = [1]\nhidden = [64]\nheads = [2]\n",
                     ": model.ffn is missing (a list of positive integers)");
  expect_space_error("[model]\nlayers = [1.5]\nhidden = [64]\nheads = [2]\nffn = [128]\n",
                     ": model.layers must list positive integers, got 1.5");
  expect_space_error("[model]\nlayers = [1, 1]\nhidden = [64]\nheads = [2]\nffn = [128]\n",
                     ": model.layers lists a value twice");
  expect_space_error("[model]\nlayers = [1]\nhidden = [64, 96]\nheads = [64]\nffn = [128]\n",
                     ": shape L1-H96-A64-F128 cannot be built: config model.heads=64 does not "
                     "divide model.hidden=96");
  expect_space_error("name = \"x\"\n", ": model table is missing ([model] with the shape choices)");
  expect_space_error("[model\n", ":1:7: Error while parsing table header: expected ']', saw '\\n'");
  expect_space_error(ok + "[prune]\ntau_train = -1e-3\n",
                     ": prune.tau_train must be at least 0, got -0.001");
  expect_space_error(ok + "[prune]\ntau = 1e-3\n", ": prune.tau is not a known key");
}

// [prune] sets the thresholds every run trains with; the config's stand where it is silent.
TEST(CodesignSpace, PruneTableSetsTheRunsThresholds) {
  TempDir d{"codesign_space_prune"};
  d.write("s.toml",
          "[model]\nlayers = [1]\nhidden = [64]\nheads = [2]\nffn = [128]\n"
          "[prune]\ntau_train = 1e-3\ntau_act_grad = 0\n");
  RunConfig base;
  base.model.prune.tau_infer = 0.05;
  base.model.prune.tau_act_grad = 1e-4;
  const RunConfig c = load_model_space(d / "s.toml", base).pruned(base);
  EXPECT_EQ(c.model.prune.tau_train, 1e-3);
  EXPECT_EQ(c.model.prune.tau_act_grad, 0.0);
  EXPECT_EQ(c.model.prune.tau_infer, 0.05);
}

TEST(CodesignSpace, ShippedSpacesLoad) {
  EXPECT_EQ(
      load_model_space(require_shipped_file("configs/codesign_space.toml"), RunConfig{}).size(),
      192u);
  EXPECT_EQ(
      load_model_space(require_shipped_file("configs/codesign_tiny.toml"), RunConfig{}).size(),
      36u);
}

// The command end to end: three real (tiny) training runs on the CPU, the report, then a
// restart that trains nothing.
TEST(CodesignCli, TrainsReportsAndResumes) {
  TempDir d{"codesign_cli"};
  d.write("train.tsv", test::tiny_sentiment_tsv(120, 1));
  d.write("space.toml",
          "[model]\nlayers = [1]\nhidden = [16, 32]\nheads = [2]\nffn = [32]\n"
          "[prune]\ntau_train = 1e-3\n");
  const std::string args =
      "codesign --space " + (d / "space.toml") + " --out " + (d / "out") +
      " --set data.format=tsv --set data.path=" + (d / "train.tsv") +
      " --set data.min_freq=1 --set data.max_len=16 --set model.hidden=16 --set model.heads=2"
      " --set model.ffn=64 --set model.layers=1 --set train.batch_size=16 --set train.threads=1"
      " --runs 3 --steps 4 --initial 1 --per-round 1 --population 8 --generations 3";
  const test::CliResult r = test::run_hwt(args, d);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("run 3/3"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("chosen"), std::string::npos) << r.out;
  for (const char* f :
       {"front.csv", "codesign.json", "accuracy_latency.svg", "accuracy_energy.svg", "runs.jsonl"})
    EXPECT_TRUE(std::filesystem::exists(d.path() / "out" / f)) << f;
  // The charts' texts (legend, ticks, titles) inside the canvas and apart (issue 35).
  for (const char* f : {"accuracy_latency.svg", "accuracy_energy.svg"})
    test::expect_clean_layout(test::slurp(d.path() / "out" / f), f);
  // HWT_UPDATE_SCREENSHOTS=1: docs/img/chart_codesign_accuracy_latency.png
  test::expect_screenshot(test::slurp(d.path() / "out" / "accuracy_latency.svg"),
                          "chart_codesign_accuracy_latency", d.path());
  const nlohmann::json j = nlohmann::json::parse(test::slurp(d.path() / "out" / "codesign.json"));
  EXPECT_EQ(j["runs_trained"], 3);
  EXPECT_EQ(j["runs"].size(), 3u);
  EXPECT_GT(j["chosen"]["accuracy"].get<double>(), 0);
  // The space file's DynaProp threshold: every run pruned and is simulated with what it measured.
  EXPECT_EQ(j["search"]["prune"]["tau_train"], 1e-3);
  for (const char* pair : {"chosen", "baseline"})
    EXPECT_EQ(j[pair]["sparsity"].get<std::string>().rfind("measured in ", 0), 0u) << pair;
  for (const nlohmann::json& run : j["runs"])
    EXPECT_GT(run["sparsity"]["points"]["param_grads.linear"]["sparsity"].get<double>(), 0);
  // Each run keeps its report; its checkpoints go once the accuracy is read.
  const std::filesystem::path baseline_run = d.path() / "out" / "runs" / "L1-H16-A2-F64";
  EXPECT_TRUE(std::filesystem::exists(baseline_run / "run.json"));
  EXPECT_FALSE(std::filesystem::exists(baseline_run / "checkpoint.safetensors"));

  const test::CliResult again = test::run_hwt(args, d);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.err.find("resuming: 3 runs"), std::string::npos) << again.err;
  const nlohmann::json j2 = nlohmann::json::parse(test::slurp(d.path() / "out" / "codesign.json"));
  EXPECT_EQ(j2["runs_trained"], 0);
  EXPECT_EQ(j2["runs_cached"], 3);
  EXPECT_EQ(j2["chosen"], j["chosen"]);
}

TEST(CodesignCli, BadInputIsOneLineAndTrainsNothing) {
  TempDir d{"codesign_cli_bad"};
  d.write("space.toml", "[model]\nlayers = [1]\nhidden = [64]\nheads = [3]\nffn = [128]\n");
  d.write("tt_space.toml", "[model]\nlayers = [1]\nhidden = [32]\nheads = [4]\nffn = [64]\n");
  for (const auto& [extra, needle] :
       {std::pair<std::string, std::string>{"--space " + (d / "space.toml"),
                                            "shape L1-H64-A3-F128 cannot be built"},
        {"--runs 0", "--runs 0 must be at least 1"},
        {"--mode best", "--mode must be pareto or weighted"},
        {"--space nope", "--space 'nope'"},
        {"--steps 0", "--steps 0 must be at least 1"},
        {"--config tt_tiny --set model.prune.tau_train=1e-3 --space " + (d / "tt_space.toml"),
         "maps onto dense blocks only"}}) {
    const test::CliResult r =
        test::run_hwt("codesign --out " + (d / "out") + " " + extra + " --quiet", d);
    EXPECT_EQ(r.exit_code, 2) << extra << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(d.path() / "out" / "runs")) << extra;
  }
}

}  // namespace
}  // namespace hwt::codesign
