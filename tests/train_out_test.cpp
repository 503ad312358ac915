// `hwt train --out DIR` and the run already there: refused unless --overwrite (which replaces it
// whole) or --resume; the final "wrote" line names every file the run left in DIR.
#include <gtest/gtest.h>

#include <map>

#include "cli_util.h"

namespace hwt {
namespace {

using test::run_hwt;
using test::TempDir;
namespace fs = std::filesystem;

const std::string kTiny = test::kTinyTsvSettings + " --set train.max_steps=4";

class TrainOut : public ::testing::Test {
 protected:
  TempDir dir{"train_out"};
  void SetUp() override { dir.write("train.tsv", test::tiny_sentiment_tsv(80, 2)); }
  std::string out() const { return dir / "out"; }
  test::CliResult train(const std::string& extra) {
    return run_hwt("train --out " + out() + " --set data.path=" + (dir / "train.tsv") + " " +
                       kTiny + " " + extra,
                   dir);
  }
  // Every file of the output folder with its bytes and modification time.
  std::map<std::string, std::pair<std::string, fs::file_time_type>> snapshot() const {
    std::map<std::string, std::pair<std::string, fs::file_time_type>> files;
    for (const auto& e : fs::directory_iterator(out()))
      files[e.path().filename().string()] = {test::slurp(e.path()), e.last_write_time()};
    return files;
  }
  // The "wrote ..." line of stdout.
  std::string wrote_line(const std::string& stdout_text) const {
    const size_t at = stdout_text.find("\nwrote ");
    if (at == std::string::npos) return "";
    return stdout_text.substr(at + 1, stdout_text.find('\n', at + 1) - at - 1);
  }
};

TEST_F(TrainOut, RefusesAnEarlierRunAndLeavesItAsItWas) {
  ASSERT_EQ(train("").exit_code, 0);
  const auto before = snapshot();
  const test::CliResult again = train("");
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_EQ(again.err, "hwt: error: --out " + out() +
                           " holds an earlier run (run.json, metrics.jsonl, loss.svg, "
                           "checkpoint.safetensors, best.safetensors): add --overwrite to "
                           "replace it, or --resume its checkpoint to continue it\n");
  EXPECT_EQ(snapshot(), before) << "the refused run changed the folder";
  // --resume continues the run in its own folder.
  const test::CliResult resumed =
      train("--resume " + out() + "/checkpoint.safetensors --set train.max_steps=6");
  EXPECT_EQ(resumed.exit_code, 0) << resumed.err;
}

TEST_F(TrainOut, AnEmptyFolderOrOtherFilesAreNoRun) {
  fs::create_directories(out());
  dir.write("out/notes.txt", "mine");
  const test::CliResult r = train("");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(test::slurp(out() + "/notes.txt"), "mine");
}

TEST_F(TrainOut, OverwriteReplacesTheEarlierRunWhole) {
  // The earlier run: best.safetensors and step checkpoints the new one will not write.
  const test::CliResult first = train("--set train.checkpoint_every=2");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const std::string o = out();
  EXPECT_EQ(wrote_line(first.out),
            "wrote " + o + "/run.json, " + o + "/metrics.jsonl, " + o + "/loss.svg, " + o +
                "/checkpoint.safetensors, " + o + "/best.safetensors, " + o +
                "/checkpoint-step2.safetensors, " + o + "/checkpoint-step4.safetensors");
  const auto before = snapshot();
  const test::CliResult second =
      train("--overwrite --set data.valid_fraction=0 --set train.max_steps=3");
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(wrote_line(second.out), "wrote " + o + "/run.json, " + o + "/metrics.jsonl, " + o +
                                        "/loss.svg, " + o + "/checkpoint.safetensors");
  std::vector<std::string> left;
  for (const auto& [name, file] : snapshot()) left.push_back(name);
  EXPECT_EQ(left, (std::vector<std::string>{"checkpoint.safetensors", "loss.svg", "metrics.jsonl",
                                            "run.json"}));
  EXPECT_NE(snapshot().at("run.json"), before.at("run.json"));
}

}  // namespace
}  // namespace hwt
