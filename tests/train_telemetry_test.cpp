// What `hwt train` records of time, energy and cost on a CPU-only machine: run.json's
// "telemetry" block with its nulls and reasons, the metrics-line fields, --price and the
// summary line.
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "cli_util.h"
#include "hw/gpu_catalog.h"
#include "train/run_cost.h"
#include "train/run_files.h"
#include "train/trainer.h"

namespace hwt {
namespace {

using test::TempDir;

std::set<std::string> keys(const nlohmann::json& j) {
  std::set<std::string> k;
  for (const auto& [key, value] : j.items()) k.insert(key);
  return k;
}

class TrainTelemetry : public ::testing::Test {
 protected:
  TrainTelemetry() : dir("train_telemetry") {
    dir.write("train.tsv", test::tiny_sentiment_tsv(120, 2));
    setenv("HWT_POWERCAP_ROOT", (dir / "no-powercap").c_str(), 1);  // CPU energy: a known null
    c = test::tiny_tsv_classifier(dir);
    c.model.layers = 1;
    c.train.device = DeviceChoice::Cpu;
    c.train.batch_size = 8;
    c.train.max_steps = 6;
    c.train.log_every = 2;
    c.train.eval_every = 3;
  }
  std::vector<nlohmann::json> train_lines(const std::string& out) const {
    std::istringstream lines(test::slurp(dir.path() / out / "metrics.jsonl"));
    std::vector<nlohmann::json> v;
    for (std::string l; std::getline(lines, l);)
      if (const auto j = nlohmann::json::parse(l); !j.contains("split")) v.push_back(j);
    return v;
  }
  TempDir dir;
  RunConfig c;
};

TEST_F(TrainTelemetry, CpuRunRecordsNullsWithReasons) {
  const nlohmann::json run = train({c, dir / "out", "", false});
  const nlohmann::json& t = run["telemetry"];
  EXPECT_EQ(keys(t), (std::set<std::string>{"gpu", "gpu_unavailable", "train", "eval", "total",
                                            "price_per_gpu_hour", "price_source", "cost_usd", "mfu",
                                            "mfu_null_reason"}));
  EXPECT_TRUE(t["gpu"].is_null());
  EXPECT_EQ(t["gpu_unavailable"], "the run is on the CPU");
  const std::set<std::string> window_keys = {"seconds",
                                             "gpu_energy_j",
                                             "gpu_energy_method",
                                             "gpu_energy_null_reason",
                                             "gpu_power_mean_w",
                                             "gpu_util_mean_pct",
                                             "gpu_util_peak_pct",
                                             "sm_clock_mean_mhz",
                                             "temperature_max_c",
                                             "memory_used_peak_gib",
                                             "cpu_energy_j",
                                             "cpu_energy_null_reason",
                                             "process_cpu_util_pct"};
  for (const char* w : {"train", "eval", "total"}) {
    const nlohmann::json& s = t[w];
    EXPECT_EQ(keys(s), window_keys) << w;
    for (const char* k : {"gpu_energy_j", "gpu_energy_method", "gpu_power_mean_w",
                          "gpu_util_mean_pct", "gpu_util_peak_pct", "sm_clock_mean_mhz",
                          "temperature_max_c", "memory_used_peak_gib", "cpu_energy_j"})
      EXPECT_TRUE(s[k].is_null()) << w << "." << k;
    EXPECT_EQ(s["gpu_energy_null_reason"], "the run is on the CPU") << w;
    EXPECT_EQ(s["cpu_energy_null_reason"], "no RAPL package zones under " + (dir / "no-powercap"));
    EXPECT_GT(s["seconds"].get<double>(), 0) << w;
    EXPECT_GT(s["process_cpu_util_pct"].get<double>(), 0) << w;
  }
  // Training and evaluation are disjoint parts of the run, timed like timing.train_s/eval_s.
  const double train_s = t["train"]["seconds"], eval_s = t["eval"]["seconds"],
               total_s = t["total"]["seconds"];
  EXPECT_LT(train_s + eval_s, total_s);
  EXPECT_NEAR(train_s, run["timing"]["train_s"].get<double>(), 0.05 + 0.2 * train_s);
  EXPECT_NEAR(eval_s, run["timing"]["eval_s"].get<double>(), 0.05 + 0.2 * eval_s);
  EXPECT_GE(total_s, run["timing"]["total_s"].get<double>());
  EXPECT_TRUE(t["price_per_gpu_hour"].is_null());
  EXPECT_EQ(t["price_source"], "unknown: no --price, and the run is on the CPU");
  EXPECT_TRUE(t["cost_usd"]["train"].is_null());
  EXPECT_TRUE(t["cost_usd"]["total"].is_null());
  EXPECT_TRUE(t["mfu"].is_null());
  EXPECT_EQ(t["mfu_null_reason"], "the run is on the CPU");
  EXPECT_EQ(run["results"]["tokens_trained"].get<int64_t>() > 6 * 8, true);

  const auto lines = train_lines("out");
  ASSERT_EQ(lines.size(), 3u);  // steps 2, 4, 6
  for (const auto& l : lines)
    for (const char* k : {"gpu_power_w", "gpu_util_pct", "gpu_energy_j"})
      EXPECT_TRUE(l.contains(k) && l[k].is_null()) << l.dump();
}

TEST_F(TrainTelemetry, PriceGivesCostPerHour) {
  TrainRequest r{c, dir / "out", "", false};
  r.price_per_gpu_hour = 3.6;  // one thousandth of a dollar per second
  const nlohmann::json t = train(r)["telemetry"];
  EXPECT_DOUBLE_EQ(t["price_per_gpu_hour"].get<double>(), 3.6);
  EXPECT_EQ(t["price_source"], "--price");
  EXPECT_DOUBLE_EQ(t["cost_usd"]["train"].get<double>(),
                   1e-3 * t["train"]["seconds"].get<double>());
  EXPECT_DOUBLE_EQ(t["cost_usd"]["total"].get<double>(),
                   1e-3 * t["total"]["seconds"].get<double>());
}

TEST_F(TrainTelemetry, SwitchedOffItMeasuresNothing) {
  c.train.telemetry = false;
  EXPECT_TRUE(train({c, dir / "out", "", false})["telemetry"].is_null());
  for (const auto& l : train_lines("out")) EXPECT_TRUE(l["gpu_energy_j"].is_null()) << l.dump();
}

TEST_F(TrainTelemetry, CommandPrintsASummaryAndRejectsABadPrice) {
  const std::string args =
      "train --quiet --set data.format=tsv --set data.path=" + (dir / "train.tsv") +
      " --set model.hidden=16 --set model.heads=2 --set model.ffn=32 "
      "--set model.layers=1 --set data.max_len=16 --set data.min_freq=1 "
      "--set train.batch_size=8 --set train.max_steps=4 --set "
      "train.threads=1 --set train.device=cpu --out " +
      (dir / "out");
  const test::CliResult ok = test::run_hwt(args + " --price 2.5", dir);
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  const size_t at = ok.out.find("telemetry: ");
  ASSERT_NE(at, std::string::npos) << ok.out;
  const std::string line = ok.out.substr(at, ok.out.find('\n', at) - at);
  EXPECT_NE(line.find(", GPU energy n/a (the run is on the CPU), cost $0.0"), std::string::npos)
      << line;
  EXPECT_EQ(line.find("MFU"), std::string::npos) << line;
  for (const char* bad : {"0", "-1", "abc", "2x"}) {
    const test::CliResult r = test::run_hwt(args + "2 --price " + bad, dir);
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_EQ(r.err, std::string("hwt: error: --price ") + bad +
                         ": expected a positive number of USD per GPU-hour\n");
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "out2")) << bad;
  }
}

WindowStats window_of(double seconds) {
  WindowStats w;
  w.seconds = seconds;
  return w;
}

TEST(RunCost, CatalogGpuGivesPriceCostAndMfu) {
  const GpuSpec h200 = load_gpu_catalog().find("H200");
  bool traced = false;
  RunCosting c{std::nullopt, 1000000, [&] {
                 traced = true;
                 return std::optional<double>(1e9);
               }};
  const nlohmann::json j =
      cost_and_mfu("NVIDIA H200", "", window_of(100), window_of(360), Precision::Bf16, c);
  EXPECT_TRUE(traced);
  EXPECT_DOUBLE_EQ(j["price_per_gpu_hour"].get<double>(), h200.price_per_hour);
  EXPECT_EQ(j["price_source"], h200.price_source);
  EXPECT_DOUBLE_EQ(j["cost_usd"]["train"].get<double>(), h200.price_per_hour * 100 / 3600);
  EXPECT_DOUBLE_EQ(j["cost_usd"]["total"].get<double>(), h200.price_per_hour / 10);
  // 1e9 FLOPs per token x 1e6 tokens in 100 s: 1e13 FLOP/s of the bf16 peak.
  EXPECT_DOUBLE_EQ(j["mfu"].get<double>(), 1e13 / (h200.peak_tflops(Precision::Bf16) * 1e12));
  EXPECT_FALSE(j.contains("mfu_null_reason"));

  c.price_per_gpu_hour = 2.0;
  c.flops_per_token = [] { return std::nullopt; };
  const nlohmann::json p =
      cost_and_mfu("NVIDIA H200", "", window_of(100), window_of(360), Precision::Bf16, c);
  EXPECT_EQ(p["price_source"], "--price");
  EXPECT_DOUBLE_EQ(p["cost_usd"]["total"].get<double>(), 0.2);
  EXPECT_TRUE(p["mfu"].is_null());
  EXPECT_EQ(p["mfu_null_reason"], "no traced FLOP count for the run's model");
}

TEST(RunCost, UnknownOrMissingGpuGivesReasons) {
  bool traced = false;
  const RunCosting c{std::nullopt, 1000, [&] {
                       traced = true;
                       return std::optional<double>(1e9);
                     }};
  const nlohmann::json u =
      cost_and_mfu("NVIDIA Foo 9000", "", window_of(10), window_of(20), Precision::Bf16, c);
  const std::string why = "GPU 'NVIDIA Foo 9000' is not in the GPU catalog";
  EXPECT_TRUE(u["price_per_gpu_hour"].is_null());
  EXPECT_EQ(u["price_source"], "unknown: no --price, and " + why);
  EXPECT_TRUE(u["cost_usd"]["train"].is_null());
  EXPECT_EQ(u["mfu_null_reason"], why);
  const nlohmann::json n = cost_and_mfu(std::nullopt, "cannot load NVML (x)", window_of(10),
                                        window_of(20), Precision::Bf16, c);
  EXPECT_EQ(n["mfu_null_reason"], "cannot load NVML (x)");
  EXPECT_FALSE(traced);  // no peak, no trace
}

TEST(RunPlots, PowerChartOnlyWhenTheGpuWasMeasured) {
  TempDir dir("run_plots");
  RunCurves c;
  c.train_step = {1, 2};
  c.train_loss = {3.0, 2.5};
  write_run_plots(dir.path().string(), c);
  EXPECT_TRUE(std::filesystem::exists(dir / "loss.svg"));
  EXPECT_FALSE(std::filesystem::exists(dir / "power.svg"));
  c.gpu_step = {1, 2};
  c.gpu_power_w = {430, 437};
  c.gpu_util_pct = {80, 81};
  write_run_plots(dir.path().string(), c);
  const std::string svg = test::slurp(dir / "power.svg");
  EXPECT_NE(svg.find("power (W)"), std::string::npos);
  EXPECT_NE(svg.find("utilisation (%)"), std::string::npos);
  ASSERT_NE(svg.find("<polyline"), std::string::npos);
  EXPECT_NE(svg.find("<polyline"), svg.rfind("<polyline"));  // two series
}

}  // namespace
}  // namespace hwt
