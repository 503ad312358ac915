// `hwt predict` on text with words and characters its checkpoint's vocabulary lacks, UTF-8
// among them: one [UNK] per unknown word (word-level) or character (character-level).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_util.h"

namespace hwt {
namespace {

using test::run_hwt;
using test::TempDir;

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
  const test::CliResult r = predict_after_training(
      dir,
      std::string(" --set data.format=text --set data.path=") + HWT_TEST_DIR +
          "/fixtures/golden/lm.txt --set data.tokenizer=char "
          "--set data.max_len=32 --set data.test_fraction=0 --set model.max_seq=32 "
          "--set model.head=lm --set model.causal=true --set model.hidden=32 --set model.heads=4 "
          "--set model.ffn=64 --set train.max_steps=4 --set train.batch_size=8 "
          "--set train.threads=1",
      "--prompt 'The café ' --tokens 1 --temperature 0");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.starts_with("The caf[UNK] ")) << r.out;
}

}  // namespace
}  // namespace hwt
