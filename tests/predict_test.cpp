// `hwt predict` on text with words and characters its checkpoint's vocabulary lacks, UTF-8
// among them: one [UNK] per unknown word (word-level) or character (character-level); and
// `hwt generate`, which predict runs on a language model: its output, batches and refusals.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_util.h"

namespace hwt {
namespace {

using test::run_hwt;
using test::TempDir;

// A tiny character-level LM on the golden fixture's text.
const std::string kTinyLm =
    std::string(" --set data.format=text --set data.path=") + HWT_TEST_DIR +
    "/fixtures/golden/lm.txt --set data.tokenizer=char "
    "--set data.max_len=32 --set data.test_fraction=0 --set model.max_seq=32 "
    "--set model.head=lm --set model.causal=true --set model.hidden=32 --set model.heads=4 "
    "--set model.ffn=64 --set train.max_steps=4 --set train.batch_size=8 --set train.threads=1";

// Trains a short run in dir/run with `settings` and returns `hwt predict` on its checkpoint.
test::CliResult predict_after_training(const TempDir& dir, const std::string& settings,
                                       const std::string& predict_args) {
  const test::CliResult trained = run_hwt("train --quiet --out " + (dir / "run") + settings, dir);
  EXPECT_EQ(trained.exit_code, 0) << trained.err;
  return run_hwt("predict " + (dir / "run/checkpoint.safetensors") + " " + predict_args, dir);
}

TEST(Predict, AnUnknownUtf8WordIsOneUnkTag) {
  TempDir dir("predict_utf8_word");
  // Intent and slots on the ATIS fixture: a word-level vocabulary, one tag per word.
  const test::CliResult r = predict_after_training(
      dir,
      std::string(" --set data.format=jointbert --set data.path=") + HWT_TEST_DIR +
          "/fixtures/data/atis_mini --set data.unseen_labels=unk "
          "--set data.min_freq=1 --set data.max_len=24 --set model.max_seq=24 "
          "--set model.head=joint --set model.hidden=32 --set model.heads=2 --set model.ffn=64 "
          "--set train.max_steps=4 --set train.batch_size=4 --set train.threads=1",
      "--json --text 'from boston to zürich café'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> tokens;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  for (const auto& t : j["tags"]) tokens.push_back(t["token"]);
  EXPECT_EQ(tokens, (std::vector<std::string>{"from", "boston", "to", "[UNK]", "[UNK]"}));
}

TEST(Predict, AnUnknownUtf8CharacterIsOneUnk) {
  TempDir dir("predict_utf8_char");
  const test::CliResult r =
      predict_after_training(dir, kTinyLm, "--prompt 'The café ' --tokens 1 --temperature 0");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.starts_with("The caf[UNK] ")) << r.out;
}

TEST(GenerateCli, PredictOnAnLmIsGenerate) {
  TempDir dir("generate_cli");
  const test::CliResult predicted =
      predict_after_training(dir, kTinyLm, "--prompt 'The e' --tokens 12 --temperature 0");
  ASSERT_EQ(predicted.exit_code, 0) << predicted.err;
  const std::string ckpt = dir / "run/checkpoint.safetensors";
  const test::CliResult generated =
      run_hwt("generate " + ckpt + " --prompt 'The e' --max-new-tokens 12 --temperature 0", dir);
  ASSERT_EQ(generated.exit_code, 0) << generated.err;
  EXPECT_EQ(generated.out, predicted.out);
  EXPECT_TRUE(generated.out.starts_with("The e")) << generated.out;
  EXPECT_NE(generated.err.find("decode: "), std::string::npos) << generated.err;
  EXPECT_NE(generated.err.find("tokens/s"), std::string::npos) << generated.err;
  // The context (model.max_seq = 32) ends a sequence that asks for more.
  const test::CliResult longer = run_hwt(
      "generate " + ckpt + " --prompt 'The e' --max-new-tokens 100 --temperature 0 --json", dir);
  ASSERT_EQ(longer.exit_code, 0) << longer.err;
  const nlohmann::json j = nlohmann::json::parse(longer.out);
  EXPECT_EQ(j["tokens"], 27);
  EXPECT_EQ(j["finish"], "context");
}

TEST(GenerateCli, APromptFileIsABatchInOrder) {
  TempDir dir("generate_batch");
  const test::CliResult trained = run_hwt("train --quiet --out " + (dir / "run") + kTinyLm, dir);
  ASSERT_EQ(trained.exit_code, 0) << trained.err;
  const std::string ckpt = dir / "run/checkpoint.safetensors";
  dir.write("prompts.txt", "The\r\nA longer prompt\n");
  const test::CliResult r = run_hwt("generate " + ckpt + " --prompt-file " + (dir / "prompts.txt") +
                                        " --prompt x --max-new-tokens 5 --seed 4 --json",
                                    dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<nlohmann::json> lines;
  std::istringstream in(r.out);
  for (std::string l; std::getline(in, l);) lines.push_back(nlohmann::json::parse(l));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0]["prompt"], "x");  // --prompt first, then the file's lines
  EXPECT_EQ(lines[1]["prompt"], "The");
  EXPECT_EQ(lines[2]["prompt"], "A longer prompt");
  // Each as it is alone.
  const test::CliResult alone = run_hwt(
      "generate " + ckpt + " --prompt 'A longer prompt' --max-new-tokens 5 --seed 4 --json", dir);
  ASSERT_EQ(alone.exit_code, 0) << alone.err;
  EXPECT_EQ(nlohmann::json::parse(alone.out), lines[2]);
}

TEST(GenerateCli, BadArgumentsAreOneLineErrors) {
  TempDir dir("generate_errors");
  const test::CliResult trained = run_hwt("train --quiet --out " + (dir / "run") + kTinyLm, dir);
  ASSERT_EQ(trained.exit_code, 0) << trained.err;
  const std::string ckpt = dir / "run/checkpoint.safetensors";
  test::expect_one_line_error(run_hwt("generate " + ckpt + " --prompt ''", dir), 2, "empty");
  test::expect_one_line_error(run_hwt("generate " + ckpt, dir), 2, "no prompt");
  test::expect_one_line_error(run_hwt("generate " + ckpt + " --prompt a --top-p 0", dir), 2,
                              "--top-p");
  test::expect_one_line_error(run_hwt("generate " + ckpt + " --prompt a --top-p 1.5", dir), 2,
                              "--top-p");
  test::expect_one_line_error(
      run_hwt("generate " + ckpt + " --prompt-file " + (dir / "missing.txt"), dir), 2,
      "missing.txt");
  // A classifier checkpoint is not a language model.
  const test::CliResult classifier = run_hwt(
      "train --quiet --out " + (dir / "cls") +
          " --set data.format=jointbert --set data.path=" + HWT_TEST_DIR +
          "/fixtures/data/atis_mini --set data.unseen_labels=unk --set data.min_freq=1 "
          "--set data.max_len=24 --set model.max_seq=24 --set model.head=classify "
          "--set model.hidden=32 --set model.heads=2 --set model.ffn=64 --set train.max_steps=2 "
          "--set train.batch_size=4 --set train.threads=1",
      dir);
  ASSERT_EQ(classifier.exit_code, 0) << classifier.err;
  test::expect_one_line_error(
      run_hwt("generate " + (dir / "cls/checkpoint.safetensors") + " --prompt hi", dir), 2,
      "not a causal language model");
}

}  // namespace
}  // namespace hwt
