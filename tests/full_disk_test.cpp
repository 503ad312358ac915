// Issue 31: full disks and unwritable folders. What can be known before training starts is an
// error then; a write that fails mid-run (here through a file size limit, which fails writes
// with EFBIG as a full disk fails them with ENOSPC) is one error line, exit 2, and leaves no
// half-written file: no temporary file, no torn line in metrics.jsonl, every checkpoint whole.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "child_process.h"
#include "cli_util.h"
#include "core/error.h"
#include "core/safetensors.h"
#include "train/run_files.h"

namespace hwt {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

class FullDisk : public ::testing::Test {
 protected:
  TempDir dir{"full_disk"};
  void SetUp() override { dir.write("train.tsv", test::tiny_sentiment_tsv(200, 5)); }
  std::vector<std::string> run_args(const std::vector<std::string>& sets) {
    std::vector<std::string> args = {"train", "--out", dir / "out", "--quiet"};
    for (const std::string& set :
         {"data.path=" + (dir / "train.tsv"), std::string("data.format=tsv"),
          std::string("data.min_freq=1"), std::string("model.hidden=64"),
          std::string("model.ffn=256"), std::string("model.layers=2"),
          std::string("train.batch_size=16"), std::string("train.log_every=1"),
          std::string("train.threads=1")})
      args.insert(args.end(), {"--set", set});
    for (const std::string& set : sets) args.insert(args.end(), {"--set", set});
    return args;
  }
  // Runs hwt with writes limited to `limit` bytes per file; its exit code and stderr.
  test::CliResult run_limited(const std::vector<std::string>& sets, rlim_t limit) {
    const pid_t pid = test::spawn_hwt(run_args(sets), dir, {limit});
    test::CliResult r;
    r.exit_code = test::wait_exit(pid, std::chrono::minutes(2));
    r.err = test::slurp(dir / ".child_stderr");
    return r;
  }
  // Nothing in out/ is half-written: no temporary file, every metrics line whole, every
  // checkpoint opens with its checksums.
  void expect_nothing_half_written() {
    for (const auto& e : fs::directory_iterator(dir.path() / "out")) {
      const std::string name = e.path().filename().string();
      EXPECT_EQ(name.find(".hwt-tmp."), std::string::npos) << name << " was left behind";
      if (name.ends_with(".safetensors")) {
        EXPECT_TRUE(SafetensorsFile::open(e.path().string()).checksummed()) << name;
      }
    }
    std::istringstream lines(test::slurp(dir.path() / "out" / "metrics.jsonl"));
    int whole = 0;
    for (std::string line; std::getline(lines, line); ++whole)
      EXPECT_FALSE(nlohmann::json::parse(line, nullptr, false).is_discarded())
          << "torn line: " << line;
    EXPECT_GT(whole, 0);
  }
};

// The first checkpoint is larger than the limit: its write fails part-way.
TEST_F(FullDisk, CheckpointWriteFailureIsOneLineAndLeavesNoPartialFile) {
  const auto r = run_limited({"train.max_steps=40", "train.checkpoint_every=4"}, 64 * 1024);
  test::expect_one_line_error(r, 2, "checkpoint-step4.safetensors: File too large");
  EXPECT_NE(r.err.find("at most 65536 bytes"), std::string::npos) << r.err;
  expect_nothing_half_written();
  EXPECT_FALSE(fs::exists(dir.path() / "out" / "checkpoint-step4.safetensors"));
}

// metrics.jsonl reaches the limit mid-line: the partial line is cut off again.
TEST_F(FullDisk, MetricsWriteFailureCutsThePartialLine) {
  const auto r = run_limited({"train.max_steps=400", "train.eval_every=1000"}, 3000);
  test::expect_one_line_error(r, 2, "metrics.jsonl: File too large");
  expect_nothing_half_written();
  EXPECT_LE(fs::file_size(dir.path() / "out" / "metrics.jsonl"), 3000u);
}

TEST_F(FullDisk, OutputUnderAFileIsRefusedBeforeTheDataIsRead) {
  dir.write("afile", "x");
  // data.path does not exist: the folder is checked first, so its error is the one given.
  const auto r = test::run_hwt("train --out " + (dir / "afile/run") +
                                   " --set data.path=/nonexistent.tsv --set data.format=tsv",
                               dir);
  test::expect_one_line_error(r, 2, "is not a folder");
}

TEST_F(FullDisk, ReadOnlyOutputFolderIsRefusedBeforeTheDataIsRead) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes into read-only folders";
  fs::create_directory(dir.path() / "locked");
  fs::permissions(dir.path() / "locked", fs::perms::owner_read | fs::perms::owner_exec);
  const auto r = test::run_hwt("train --out " + (dir / "locked/run") +
                                   " --set data.path=/nonexistent.tsv --set data.format=tsv",
                               dir);
  fs::permissions(dir.path() / "locked", fs::perms::owner_all);
  test::expect_one_line_error(r, 2, "cannot write output folder");
}

TEST(CheckpointRoom, TooLittleFreeSpaceForOneCheckpointIsAnErrorNamingTheSizes) {
  try {
    check_room_for_checkpoints(fs::temp_directory_path().string(), uint64_t{1} << 62, 3);
    FAIL() << "a checkpoint of 4 EiB fitted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("not enough room in"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("GiB are free"), std::string::npos) << e.what();
  }
  // One byte fits anywhere this test can run.
  EXPECT_NO_THROW(check_room_for_checkpoints(fs::temp_directory_path().string(), 1, 3));
}

}  // namespace
}  // namespace hwt
