// Issue 31's kill test: a small CPU run with frequent checkpoints is killed with SIGKILL at random
// moments and resumed from its newest checkpoint each time. After every kill each checkpoint in
// the folder loads with its checksums, no temporary file outlives the next start, at most one
// checkpoint interval of logged steps is lost, and the run that finally completes holds the same
// bytes as one that was never interrupted. HWT_KILL_TRIALS sets the number of kills (CI: a few;
// scripts/kill_test.sh runs the long campaign).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include <fmt/format.h>

#include "child_process.h"
#include "cli_util.h"
#include "core/safetensors.h"

namespace hwt {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono;
using test::TempDir;

constexpr int64_t kSteps = 48, kInterval = 4;

int trials() {
  const char* v = std::getenv("HWT_KILL_TRIALS");
  return v ? std::max(1, std::atoi(v)) : 3;
}

std::vector<std::string> run_args(const TempDir& dir, const std::string& out) {
  std::vector<std::string> args = {"train", "--out", dir / out, "--quiet"};
  for (const std::string& set :
       {"data.path=" + (dir / "train.tsv"), std::string("data.format=tsv"),
        std::string("data.min_freq=1"), std::string("model.hidden=64"),
        std::string("model.ffn=256"), std::string("model.layers=2"),
        std::string("train.batch_size=16"), std::string("train.log_every=1"),
        std::string("train.threads=1"), "train.max_steps=" + std::to_string(kSteps),
        "train.checkpoint_every=" + std::to_string(kInterval),
        "train.eval_every=" + std::to_string(kInterval)})
    args.insert(args.end(), {"--set", set});
  return args;
}

// The step stored in a checkpoint's state; opening it checks every tensor's checksum.
int64_t checkpoint_step(const fs::path& file) {
  const SafetensorsFile f = SafetensorsFile::open(file.string());
  EXPECT_TRUE(f.checksummed()) << file;
  return nlohmann::json::parse(f.metadata().at("state"))["step"].get<int64_t>();
}

// The newest checkpoint in `out` with optimizer state, after checking that every checkpoint
// there loads; empty when there is none yet.
std::string newest_checkpoint(const fs::path& out) {
  std::string newest;
  int64_t newest_step = -1;
  if (!fs::exists(out)) return newest;
  for (const auto& e : fs::directory_iterator(out)) {
    const std::string name = e.path().filename().string();
    if (name.ends_with(".hwt-tmp") || name.find(".hwt-tmp.") != std::string::npos) continue;
    if (!name.ends_with(".safetensors")) continue;
    const int64_t step = checkpoint_step(e.path());
    if (name != "best.safetensors" && step > newest_step) {
      newest_step = step;
      newest = e.path().string();
    }
  }
  return newest;
}

// The highest step metrics.jsonl logged (0 when none).
int64_t last_logged_step(const fs::path& metrics) {
  int64_t last = 0;
  std::istringstream lines(test::slurp(metrics));
  for (std::string line; std::getline(lines, line);) {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << "a torn line in metrics.jsonl: " << line;
    if (!j.is_discarded() && j.contains("step")) last = std::max(last, j["step"].get<int64_t>());
  }
  return last;
}

TEST(KillResume, EveryCheckpointLoadsAndTheResumedRunEqualsAnUninterruptedOne) {
  TempDir dir("kill_resume");
  dir.write("train.tsv", test::tiny_sentiment_tsv(400, 3));

  const auto start = steady_clock::now();
  const pid_t reference = test::spawn_hwt(run_args(dir, "reference"), dir);
  ASSERT_EQ(test::wait_exit(reference, minutes(5)), 0) << test::slurp(dir / ".child_stderr");
  // Kills fall uniformly over the reference run's duration and a little beyond, so some land
  // before the first checkpoint, some during writes and some after the run has ended.
  const auto duration = duration_cast<milliseconds>(steady_clock::now() - start);
  const fs::path want = dir.path() / "reference" / "checkpoint.safetensors";

  std::mt19937 rng(20261205);
  std::uniform_int_distribution<int64_t> delay(0, duration.count() * 11 / 10);
  int kills = 0, runs = 0;
  while (kills < trials()) {
    const std::string out = fmt::format("run{}", runs++);
    const fs::path out_dir = dir.path() / out;
    for (;;) {
      std::vector<std::string> args = run_args(dir, out);
      const std::string resume = newest_checkpoint(out_dir);
      if (!resume.empty())
        args.insert(args.end(), {"--resume", resume});
      else
        args.push_back("--overwrite");  // a kill before the first checkpoint: start again
      const pid_t pid = test::spawn_hwt(args, dir);
      const std::optional<int> code = test::exit_within(pid, milliseconds(delay(rng)));
      if (code) {
        ASSERT_EQ(*code, 0) << test::slurp(dir / ".child_stderr");
        for (const auto& e : fs::directory_iterator(out_dir))
          EXPECT_EQ(e.path().filename().string().find(".hwt-tmp."), std::string::npos)
              << e.path() << " outlived the next start";
        test::expect_same_tensors(out_dir / "checkpoint.safetensors", want);
        break;
      }
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
      ++kills;
      const std::string newest = newest_checkpoint(out_dir);  // every checkpoint loads
      if (HasFatalFailure() || HasFailure()) return;
      const int64_t logged =
          fs::exists(out_dir / "metrics.jsonl") ? last_logged_step(out_dir / "metrics.jsonl") : 0;
      const int64_t saved = newest.empty() ? 0 : checkpoint_step(newest);
      // A kill during the write of step k's checkpoint keeps step k - interval's.
      EXPECT_GE(saved, logged - kInterval) << "kill " << kills << ": logged " << logged;
    }
  }
  fmt::print("{} kills over {} runs, each resumed to the uninterrupted run's bytes\n", kills, runs);
}

}  // namespace
}  // namespace hwt
