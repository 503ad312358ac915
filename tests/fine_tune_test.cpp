// `hwt train --init` and train.freeze through the binary: a tiny BERT folder written by
// tests/oracle/hf_folders.py (its vocab.txt holds the words of tiny_sentiment_tsv) fine-tuned
// on that data.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstring>
#include <sstream>

#include "cli_util.h"
#include "config/freeze_spec.h"
#include "core/error.h"
#include "core/safetensors.h"
#include "cuda_test_util.h"
#include "interop_test_util.h"
#include "train/fine_tune.h"

namespace hwt {
namespace {

const std::string kData =
    "--set data.format=tsv --set data.max_len=16 --set train.batch_size=8 "
    "--set train.threads=1 --set optim.lr=3e-3 --set optim.warmup_steps=5 ";

std::vector<double> train_losses(const std::string& metrics) {
  std::vector<double> losses;
  std::istringstream in(metrics);
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    if (j.contains("loss") && !j.contains("split")) losses.push_back(j["loss"].get<double>());
  }
  return losses;
}

bool same_bytes(const SafetensorsFile& a, const SafetensorsFile& b, const std::string& name) {
  const auto x = a.get(name), y = b.get(name);
  return x.bytes == y.bytes && std::memcmp(x.data, y.data, x.bytes) == 0;
}

class FineTuneOn : public ::testing::TestWithParam<std::string> {};

// From the folder itself (imported on the fly): the classifier is new for this data's two
// labels and announced, the loss falls, and the embeddings and block 0 stay bit for bit, on the
// CPU and on the GPU.
TEST_P(FineTuneOn, AHuggingFaceFolderWithFrozenParts) {
  const bool gpu = GetParam() == "Cuda";
  if (gpu) HWT_REQUIRE_GPU();
  if (!test::have_torch()) GTEST_SKIP() << "skipped: " << test::torch_python() << " has no torch";
  test::TempDir tmp("fine_tune");
  tmp.write("train.tsv", test::tiny_sentiment_tsv(400, 7));
  const std::string folder = (test::hf_folders() / "bert_sequence").string();
  ASSERT_EQ(test::run_hwt("import " + folder + " --out " + tmp / "init.safetensors", tmp).exit_code,
            0);
  const test::CliResult r = test::run_hwt(
      "train --init " + folder + " " + kData + "--set data.path=" + tmp / "train.tsv" +
          " --set train.max_steps=120 --set train.log_every=1 --set train.eval_every=1000"
          " --set train.freeze=embeddings,layers:0" +
          (gpu ? " --set train.device=cuda" : "") + " --out " + tmp / "run",
      tmp);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string all = r.out + r.err;
  EXPECT_NE(all.find("init: fresh task head head.classifier.weight, head.classifier.bias"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("train.freeze: training"), std::string::npos) << all;

  const std::vector<double> losses =
      train_losses(test::slurp(tmp.path() / "run" / "metrics.jsonl"));
  ASSERT_GE(losses.size(), 120u);
  double first = 0, last = 0;
  for (size_t i = 0; i < 10; ++i) {
    first += losses[i];
    last += losses[losses.size() - 1 - i];
  }
  // The data is separable by words the pretrained vocabulary knows: 120 steps at lr 3e-3 take
  // the mean of the last ten losses to about half the first ten's (about ln 2); 0.7 leaves room
  // for another seed's batches while a run that learns nothing (ratio near 1) fails.
  EXPECT_LT(last, 0.7 * first) << "first ten " << first / 10 << ", last ten " << last / 10;

  const SafetensorsFile init = SafetensorsFile::open(tmp / "init.safetensors");
  const SafetensorsFile done = SafetensorsFile::open(tmp / "run/checkpoint.safetensors");
  size_t checked = 0;
  for (const std::string& name : init.names()) {
    if (!done.contains(name)) continue;
    const bool frozen = name.starts_with("embed.") || name.starts_with("layers.0.");
    EXPECT_EQ(same_bytes(init, done, name), frozen) << name;
    ++checked;
  }
  EXPECT_GT(checked, 10u);
}

INSTANTIATE_TEST_SUITE_P(Devices, FineTuneOn, ::testing::Values("Cpu", "Cuda"),
                         [](const auto& i) { return i.param; });

TEST(FineTune, RefusalsAreOneLine) {
  test::TempDir tmp("fine_tune_errors");
  tmp.write("train.tsv", test::tiny_sentiment_tsv(60, 3));
  const std::string base = "train " + kData + "--set data.path=" + tmp / "train.tsv" +
                           " --set train.max_steps=2 --quiet";
  const std::string out = " --out " + tmp / "run";
  test::expect_one_line_error(
      test::run_hwt(base + out + " --init " + tmp / "missing.safetensors", tmp), 2,
      "missing.safetensors");
  test::expect_one_line_error(
      test::run_hwt(base + out + " --set train.freeze=embeddings,decoder", tmp), 2, "'decoder'");
  test::expect_one_line_error(test::run_hwt(base + out + " --set train.freeze=layers:1-7", tmp), 2,
                              "layers:1-7");
  // A checkpoint of the tiny classifier, then a shape that disagrees with it.
  ASSERT_EQ(test::run_hwt(base + " --set model.layers=1 --out " + tmp / "first", tmp).exit_code, 0);
  const std::string init = " --init " + tmp / "first/checkpoint.safetensors";
  test::expect_one_line_error(test::run_hwt(base + out + init + " --set model.hidden=64", tmp), 2,
                              "model.hidden=64");
  test::expect_one_line_error(
      test::run_hwt(base + out + init + " --resume " + tmp / "first/checkpoint.safetensors", tmp),
      2, "--init and --resume");
  // The init's own shape and tokenizer: a second run from it starts.
  const test::CliResult ok = test::run_hwt(base + init + " --out " + tmp / "second", tmp);
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

// init_run_config: the init's shape, the user's data, training and task keys.
TEST(FineTune, TheRunConfigTakesTheShapeFromTheInit) {
  CheckpointInfo init;
  init.config.model.hidden = 48;
  init.config.model.layers = 3;
  init.config.model.num_labels = 5;
  RunConfig user;
  user.train.batch_size = 7;
  user.model.dropout = 0.3;
  user.model.layers = 3;  // agrees
  const RunConfig run = init_run_config(user, init, "init.safetensors");
  EXPECT_EQ(run.model.hidden, 48);
  EXPECT_EQ(run.model.layers, 3);
  EXPECT_EQ(run.model.num_labels, 0);  // the data's classes
  EXPECT_DOUBLE_EQ(run.model.dropout, 0.3);
  EXPECT_EQ(run.train.batch_size, 7);
  user.model.ffn = 100;  // the init has the default 512
  try {
    init_run_config(user, init, "init.safetensors");
    ADD_FAILURE() << "a disagreeing shape key was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("model.ffn=100"), std::string::npos) << e.what();
  }
}

// A compare plan's init: every run starts from it (and says so).
TEST(FineTune, ComparePlanRunsFromItsInit) {
  test::TempDir tmp("fine_tune_plan");
  tmp.write("train.tsv", test::tiny_sentiment_tsv(60, 5));
  const std::string base = "train " + kData + "--set data.path=" + tmp / "train.tsv" +
                           " --set train.max_steps=2 --set model.layers=1 --quiet";
  ASSERT_EQ(test::run_hwt(base + " --out " + tmp / "first", tmp).exit_code, 0);
  tmp.write("plan.toml",
            "base = \"\"\ninit = \"" + tmp / "first/checkpoint.safetensors" +
                "\"\nsteps = 2\nset = [\"data.format=tsv\", \"data.path=" + tmp / "train.tsv" +
                "\", \"data.max_len=16\", \"train.batch_size=8\", "
                "\"train.threads=1\"]\n[[run]]\nname = \"a\"\n[[run]]\nname = "
                "\"b\"\nset = [\"optim.lr=1e-4\"]\n");
  const test::CliResult r =
      test::run_hwt("compare --plan " + tmp / "plan.toml" + " --out " + tmp / "cmp", tmp);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* run : {"a", "b"}) {
    const auto j = nlohmann::json::parse(test::slurp(tmp.path() / "cmp" / run / "run.json"));
    EXPECT_EQ(j["init"], tmp / "first/checkpoint.safetensors") << j.dump().substr(0, 300);
  }
}

TEST(FreezeSpec, Syntax) {
  const FreezeSpec s = parse_freeze(" embeddings, layers:0-2 ,layers:5,head", 6);
  EXPECT_TRUE(s.embeddings && s.head && !s.final_norm);
  EXPECT_TRUE(s.freezes_layer(0) && s.freezes_layer(2) && s.freezes_layer(5));
  EXPECT_FALSE(s.freezes_layer(3));
  EXPECT_TRUE(parse_freeze("", 6).empty());
  for (const char* bad : {"layers", "layers:", "layers:3-1", "layers:a", "layers:6", "embedding"})
    EXPECT_THROW(parse_freeze(bad, 6), InputError) << bad;
}

}  // namespace
}  // namespace hwt
