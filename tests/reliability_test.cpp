// What a user does on purpose or by accident (issue 31): corrupted and diverged checkpoints, rates
// that cannot be meant, diverging runs, absurd thread counts, models too large for memory, and
// SIGINT/SIGTERM during training. Each gives one clear error or a safe outcome, through the hwt
// binary.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <thread>

#include <fmt/ranges.h>

#include "child_process.h"
#include "cli_util.h"
#include "core/safetensors.h"
#include "cuda_test_util.h"

namespace hwt {
namespace {

using test::run_hwt;
using test::spawn_hwt;
using test::TempDir;
using test::wait_exit;
namespace fs = std::filesystem;

using test::expect_one_line_error;
const std::string& kTiny = test::kTinyTsvSettings;

// A checkpoint rewritten through write_safetensors (so its checksums are right again) after
// `change` edits a copy of each tensor's bytes.
void rewrite(const std::string& from, const std::string& to,
             const std::function<void(const std::string& name, std::vector<char>& bytes)>& change) {
  const SafetensorsFile f = SafetensorsFile::open(from);
  std::vector<std::vector<char>> copies;
  std::vector<SafetensorsEntry> entries;
  for (const std::string& name : f.names()) {
    const SafetensorsFile::View v = f.get(name);
    copies.emplace_back(static_cast<const char*>(v.data),
                        static_cast<const char*>(v.data) + v.bytes);
    change(name, copies.back());
    entries.push_back({name, v.dtype, v.shape, copies.back().data()});
  }
  write_safetensors(to, entries, f.metadata());
}

class Reliability : public ::testing::Test {
 protected:
  TempDir dir{"reliability"};
  void SetUp() override { dir.write("train.tsv", test::tiny_sentiment_tsv(60, 1)); }
  std::string train_args(const std::string& out, const std::string& extra) {
    return "train --out " + (dir / out) + " --set data.path=" + (dir / "train.tsv") + " " + kTiny +
           " " + extra;
  }
  // A finished tiny run in dir/out; its checkpoint's bytes.
  std::string trained_checkpoint() {
    const auto r = run_hwt(train_args("out", "--set train.max_steps=4"), dir);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return test::slurp(dir.path() / "out" / "checkpoint.safetensors");
  }
  test::CliResult resume_from(const std::string& checkpoint) {
    return run_hwt(train_args("resumed", "--set train.max_steps=6 --resume " + checkpoint), dir);
  }
};

// Issue 31, row 1: flipped bytes inside a tensor's data.
TEST_F(Reliability, FlippedTensorBytesStopEvalAndResume) {
  std::string ckpt = trained_checkpoint();
  const SafetensorsFile f = SafetensorsFile::open(dir / "out/checkpoint.safetensors");
  const std::string victim = f.names()[1];
  // The data section ends the file; tensors lie in it in names() order, the first at 0.
  size_t data_bytes = 0;
  for (const std::string& n : f.names()) data_bytes += f.get(n).bytes;
  const auto offset = static_cast<const char*>(f.get(victim).data) -
                      static_cast<const char*>(f.get(f.names()[0]).data);
  const size_t at = ckpt.size() - data_bytes + static_cast<size_t>(offset);
  ckpt[at + 5] = static_cast<char>(ckpt[at + 5] ^ 0x40);
  dir.write("flipped.safetensors", ckpt);
  const std::string needle = "tensor '" + victim + "' is corrupted";
  expect_one_line_error(run_hwt("eval " + (dir / "flipped.safetensors"), dir), 2, needle);
  expect_one_line_error(resume_from(dir / "flipped.safetensors"), 2, needle);
  EXPECT_FALSE(fs::exists(dir.path() / "resumed"));
}

// A checkpoint from before checksums loads, with a warning.
TEST_F(Reliability, CheckpointWithoutChecksumsLoadsWithAWarning) {
  const std::string ckpt = trained_checkpoint();
  // Strip the checksums from the header, keeping the data as it lies.
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(ckpt[size_t(i)]);
  nlohmann::ordered_json header = nlohmann::ordered_json::parse(ckpt.substr(8, n));
  header["__metadata__"].erase("tensor_xxh3_64");
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string length(8, '\0');
  for (size_t i = 0; i < 8; ++i) length[i] = static_cast<char>(text.size() >> (8 * i));
  dir.write("old.safetensors", length + text + ckpt.substr(8 + n));
  ASSERT_FALSE(SafetensorsFile::open(dir / "old.safetensors").checksummed());
  const auto r = run_hwt("eval " + (dir / "old.safetensors"), dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(
      r.err.find("hwt: warning: checkpoint " + (dir / "old.safetensors") + " has no checksums"),
      std::string::npos)
      << r.err;
}

// Issue 31, row 3: a checkpoint holding NaN (its checksums right) is refused, naming the tensor.
TEST_F(Reliability, CheckpointWithNonFiniteWeightsIsRefused) {
  trained_checkpoint();
  const std::string nan_ckpt = dir / "nan.safetensors";
  std::string victim;
  rewrite(dir / "out/checkpoint.safetensors", nan_ckpt,
          [&](const std::string& name, std::vector<char>& bytes) {
            if (!victim.empty() || name.rfind("optim.", 0) == 0) return;
            victim = name;
            const float nan = std::nanf("");
            std::memcpy(bytes.data() + 4, &nan, 4);
          });
  const std::string needle = "tensor '" + victim + "' holds a non-finite value";
  expect_one_line_error(run_hwt("eval " + nan_ckpt, dir), 2, needle);
  expect_one_line_error(resume_from(nan_ckpt), 2, needle);
}

// Issue 31, row 2: a learning rate that makes training diverge stops it with a diagnosis (exit
// code 3); no checkpoint written holds a non-finite value, and best.safetensors never does.
TEST_F(Reliability, DivergingRunStopsWithADiagnosis) {
  const auto r = run_hwt(train_args("out",
                                    "--set optim.lr=1e6 --set train.max_steps=200 "
                                    "--set train.checkpoint_every=1 --set train.eval_every=1"),
                         dir);
  expect_one_line_error(r, 3, "training stopped at step ");
  for (const char* part : {"first non-finite gradient: ", "first non-finite weight: ",
                           "learning rate ", "last losses: step ", "the last good checkpoint is "})
    EXPECT_NE(r.err.find(part), std::string::npos) << part << " in " << r.err;
  const fs::path out = dir.path() / "out";
  const nlohmann::json run = nlohmann::json::parse(test::slurp(out / "run.json"));
  EXPECT_EQ(run["results"]["stopped_by"], "non_finite");
  EXPECT_EQ("hwt: error: " + run["results"]["diagnosis"].get<std::string>() + "\n", r.err);
  EXPECT_FALSE(fs::exists(out / "checkpoint.safetensors"));
  int checkpoints = 0;
  for (const auto& e : fs::directory_iterator(out)) {
    if (e.path().extension() != ".safetensors") continue;
    ++checkpoints;
    const auto eval = run_hwt("eval " + e.path().string(), dir);
    EXPECT_EQ(eval.exit_code, 0) << e.path() << ": " << eval.err;
  }
  EXPECT_GT(checkpoints, 0) << "the run diverged before its first checkpoint: lower optim.lr";
}

// Issue 31, rows 6 and 8: values that cannot be meant are errors naming the key.
TEST_F(Reliability, ConfigValuesThatCannotBeMeantNameTheirKey) {
  const std::pair<const char*, const char*> cases[] = {
      {"model.dropout=nan", "config model.dropout: expected a finite number, got nan"},
      {"optim.lr=inf", "config optim.lr: expected a finite number, got inf"},
      {"optim.lr=-inf", "config optim.lr: expected a finite number, got -inf"},
      {"model.dropout=1", "config model.dropout=1 must be in [0, 1)"},
      {"train.threads=-3", "config train.threads=-3 must not be negative"},
      {"train.checkpoint_every=-1", "config train.checkpoint_every=-1 must not be negative"},
  };
  for (const auto& [set, needle] : cases) {
    SCOPED_TRACE(set);
    expect_one_line_error(run_hwt(train_args("out", std::string("--set ") + set), dir), 2, needle);
    EXPECT_FALSE(fs::exists(dir.path() / "out"));
  }
  dir.write("nan.toml", "[optim]\nlr = nan\n");
  expect_one_line_error(run_hwt(train_args("out", "--config " + (dir / "nan.toml")), dir), 2,
                        "config optim.lr: expected a finite number, got nan");
}

// Issue 31, row 4: far more threads than cores are capped (with a warning) instead of crashing
// the OpenMP runtime.
TEST_F(Reliability, AbsurdThreadCountIsCappedWithAWarning) {
  const auto r =
      run_hwt(train_args("out", "--set train.max_steps=2 --set train.threads=100000"), dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("hwt: warning: train.threads=100000 is more than 4 per core"),
            std::string::npos)
      << r.err;
}

// Issue 31, row 6: a model or batch larger than the machine's memory is refused before any
// allocation is touched, naming the keys and the memory needed.
TEST_F(Reliability, ModelOrBatchTooLargeForMemoryNamesTheKeys) {
  auto r = run_hwt(train_args("out", "--set model.hidden=100000000 --set model.ffn=64"), dir);
  expect_one_line_error(r, 2, "not enough memory for the model's parameters: ");
  EXPECT_NE(r.err.find("GiB"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("lower model.hidden"), std::string::npos) << r.err;
  r = run_hwt(train_args("out", "--set train.batch_size=2000000000"), dir);
  expect_one_line_error(r, 2, "lower train.batch_size or data.max_len");
  EXPECT_FALSE(fs::exists(dir.path() / "out"));
}

// The same on the GPU: a failed cudaMalloc names the keys, as the CPU's check does.
TEST_F(Reliability, ModelOrBatchTooLargeForGpuMemoryNamesTheKeys) {
  HWT_REQUIRE_GPU();
  const std::string gpu = " --set train.device=cuda";
  auto r = run_hwt(train_args("out", "--set model.hidden=100000000 --set model.ffn=64" + gpu), dir);
  expect_one_line_error(r, 2, "not enough memory for the model's parameters: ");
  EXPECT_NE(r.err.find("lower model.hidden"), std::string::npos) << r.err;
  r = run_hwt(train_args("out", "--set train.batch_size=2000000000" + gpu), dir);
  expect_one_line_error(r, 2, "lower train.batch_size or data.max_len");
  EXPECT_FALSE(fs::exists(dir.path() / "out"));
}

// Waits until the run's metrics.jsonl holds a logged step (the first step is done).
bool first_step_logged(const fs::path& metrics) {
  using namespace std::chrono;
  for (const auto until = steady_clock::now() + minutes(1); steady_clock::now() < until;) {
    if (test::slurp(metrics).find("\"step\"") != std::string::npos) return true;
    std::this_thread::sleep_for(milliseconds(10));
  }
  return false;
}

class Signals : public Reliability, public ::testing::WithParamInterface<int> {
 protected:
  // A run of `max_steps`: the signal tests give it far more than it can do before the signal.
  // Steps of a model this size take tens of milliseconds, long enough for a second signal to
  // arrive within one.
  std::vector<std::string> run_args(const std::string& out, int64_t max_steps) {
    std::vector<std::string> args = {"train", "--out", dir / out, "--quiet"};
    for (const std::string& set :
         {"data.path=" + (dir / "train.tsv"), std::string("data.format=tsv"),
          std::string("data.min_freq=1"), std::string("model.hidden=256"),
          std::string("model.ffn=1024"), std::string("model.layers=4"),
          std::string("train.batch_size=32"), std::string("train.log_every=1"),
          std::string("train.threads=1"), "train.max_steps=" + std::to_string(max_steps)})
      args.insert(args.end(), {"--set", set});
    return args;
  }
};

// Issue 31, row 9: the step in flight finishes, a checkpoint and run.json marked interrupted are
// written, and hwt exits with 128 + the signal; the run then resumes from that checkpoint.
TEST_P(Signals, FinishTheStepCheckpointAndExit) {
  const int sig = GetParam();
  const pid_t pid = spawn_hwt(run_args("out", 1'000'000), dir);
  ASSERT_TRUE(first_step_logged(dir.path() / "out" / "metrics.jsonl"));
  ::kill(pid, sig);
  ASSERT_EQ(wait_exit(pid), 128 + sig) << test::slurp(dir / ".child_stderr");
  const fs::path out = dir.path() / "out";
  const nlohmann::json run = nlohmann::json::parse(test::slurp(out / "run.json"));
  EXPECT_EQ(run["results"]["stopped_by"], "interrupted");
  EXPECT_EQ(run["results"]["signal"], sig == SIGINT ? "SIGINT" : "SIGTERM");
  const int64_t steps = run["results"]["steps"].get<int64_t>();
  EXPECT_GE(steps, 1);
  const SafetensorsFile ckpt = SafetensorsFile::open((out / "checkpoint.safetensors").string());
  EXPECT_EQ(nlohmann::json::parse(ckpt.metadata().at("state"))["step"].get<int64_t>(), steps);

  // A temporary file of a write that a kill interrupted is removed when the run resumes.
  const pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ::waitpid(dead, nullptr, 0);
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  const std::string stale = fmt::format(".checkpoint.safetensors.hwt-tmp.{}.{}.0", host, dead);
  dir.write("out/" + stale, "partial");
  std::vector<std::string> resume = run_args("out", steps + 1);
  resume.insert(resume.end(), {"--resume", (out / "checkpoint.safetensors").string()});
  const auto r = run_hwt(fmt::format("{}", fmt::join(resume, " ")), dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(out / stale));
}

// A second signal ends the process at once: no checkpoint or run.json is written for it.
TEST_P(Signals, SecondSignalExitsAtOnce) {
  const int sig = GetParam(), other = sig == SIGINT ? SIGTERM : SIGINT;
  const pid_t pid = spawn_hwt(run_args("out", 1'000'000), dir);
  ASSERT_TRUE(first_step_logged(dir.path() / "out" / "metrics.jsonl"));
  // Two different signals: a second one of the same kind could merge with the first, pending.
  // When both are pending the kernel hands over the lower-numbered first, so either can be the
  // second: the exit code is 128 + that one.
  ::kill(pid, sig);
  ::kill(pid, other);
  const int code = wait_exit(pid);
  EXPECT_TRUE(code == 128 + SIGINT || code == 128 + SIGTERM)
      << code << ": " << test::slurp(dir / ".child_stderr");
  EXPECT_FALSE(fs::exists(dir.path() / "out" / "run.json"));
  EXPECT_FALSE(fs::exists(dir.path() / "out" / "checkpoint.safetensors"));
}

INSTANTIATE_TEST_SUITE_P(IntAndTerm, Signals, ::testing::Values(SIGINT, SIGTERM),
                         [](const auto& p) { return p.param == SIGINT ? "SIGINT" : "SIGTERM"; });

}  // namespace
}  // namespace hwt
