// fp8 training through `hwt train` on the CPU, whose fp8 GEMMs multiply fp8 operands with fp32
// activations (the reference of the GPU's): the loss follows fp32's, metrics.jsonl shows each
// log window's fp8 figures, a resumed run ends with the same bytes as one never interrupted, and
// what fp8 cannot run is refused with its reason.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli_util.h"
#include "core/safetensors.h"

namespace hwt {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

// A character LM small enough for CI whose linear layers (hidden 32, FFN 64, vocabulary padded
// to 128) and batches (8 x 32 rows) are all multiples of 16, so each runs in fp8; on the CPU also
// where a GPU is present (whose shape model would keep such small products in bf16).
std::string lm_args(const TempDir& dir, const std::string& out, const std::string& extra) {
  return "train --quiet --out " + (dir / out) + " --set data.format=text --set data.path=" +
         HWT_SOURCE_DIR "/tests/fixtures/golden/lm.txt" +
         " --set data.tokenizer=char --set data.max_len=32 --set data.test_fraction=0 "
         "--set model.max_seq=32 --set model.head=lm --set model.causal=true "
         "--set model.hidden=32 --set model.heads=4 --set model.ffn=64 --set model.dropout=0 "
         "--set model.attn_dropout=0 --set train.batch_size=8 --set train.threads=2 "
         "--set train.device=cpu "
         "--set train.log_every=4 --set optim.lr=3e-3 --set optim.warmup_steps=4 " +
         extra;
}

std::vector<nlohmann::json> metrics(const fs::path& file) {
  std::vector<nlohmann::json> lines;
  std::istringstream in(test::slurp(file));
  for (std::string line; std::getline(in, line);) {
    nlohmann::json j = nlohmann::json::parse(line);
    if (j.contains("loss") && !j.contains("split")) lines.push_back(std::move(j));
  }
  return lines;
}

TEST(Fp8Train, FollowsFp32AndShowsItsFigures) {
  TempDir dir("fp8_train_follows");
  const std::string steps = "--set train.max_steps=40 ";
  ASSERT_EQ(test::run_hwt(lm_args(dir, "fp32", steps), dir).exit_code, 0);
  const test::CliResult fp8 =
      test::run_hwt(lm_args(dir, "fp8", steps + "--set train.precision=fp8"), dir);
  ASSERT_EQ(fp8.exit_code, 0) << fp8.err;
  const std::vector<nlohmann::json> a = metrics(dir.path() / "fp32/metrics.jsonl"),
                                    b = metrics(dir.path() / "fp8/metrics.jsonl");
  ASSERT_EQ(a.size(), b.size());
  ASSERT_GE(a.size(), 10u);
  const double first = a.front()["loss"], last32 = a.back()["loss"], last8 = b.back()["loss"];
  EXPECT_LT(last32, first - 0.5) << "the fp32 run should learn";
  // Each operand carries about 2^-4 relative rounding (E4M3's 3 mantissa bits, E5M2's 2 for the
  // gradients); over 40 steps the loss stays within a few percent of fp32's.
  EXPECT_NEAR(last8, last32, 0.05 * last32);
  EXPECT_NE(last8, last32) << "the fp8 run multiplied fp8 operands";
  for (const nlohmann::json& line : b) {
    ASSERT_TRUE(line.contains("fp8")) << line.dump();
    const nlohmann::json& f = line["fp8"];
    EXPECT_GT(f["scale_max"].get<double>(), 1.0) << "the scales moved from 1 to fit the amaxes";
    for (const char* count : {"overflow", "underflow", "non_finite"})
      EXPECT_GE(f[count].get<int64_t>(), 0);
    EXPECT_EQ(f["non_finite"].get<int64_t>(), 0);
  }
}

TEST(Fp8Train, ResumedRunEqualsAnUninterruptedOne) {
  TempDir dir("fp8_train_resume");
  const std::string run =
      "--set train.precision=fp8 --set train.max_steps=8 "
      "--set train.checkpoint_every=4 ";
  ASSERT_EQ(test::run_hwt(lm_args(dir, "whole", run), dir).exit_code, 0);
  const SafetensorsFile step4 =
      SafetensorsFile::open((dir.path() / "whole/checkpoint-step4.safetensors").string());
  EXPECT_TRUE(step4.contains("fp8.scaling")) << "the scaling state is part of the checkpoint";
  fs::create_directories(dir.path() / "split");
  fs::copy_file(dir.path() / "whole/checkpoint-step4.safetensors",
                dir.path() / "split/checkpoint-step4.safetensors");
  const test::CliResult resumed = test::run_hwt(
      lm_args(dir, "split", run + "--resume " + (dir / "split/checkpoint-step4.safetensors")), dir);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  test::expect_same_tensors(dir.path() / "whole/checkpoint.safetensors",
                            dir.path() / "split/checkpoint.safetensors");
}

void recomputed_forward_counts_each_tensor_once(const std::string& model, const std::string& mode) {
  TempDir dir("fp8_train_recompute");
  const std::string run = "--set train.precision=fp8 --set train.max_steps=8 " + model;
  ASSERT_EQ(test::run_hwt(lm_args(dir, "kept", run), dir).exit_code, 0);
  const test::CliResult again =
      test::run_hwt(lm_args(dir, "again", run + "--set train.recompute=" + mode), dir);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const std::vector<nlohmann::json> a = metrics(dir.path() / "kept/metrics.jsonl"),
                                    b = metrics(dir.path() / "again/metrics.jsonl");
  ASSERT_EQ(a.size(), b.size());
  int64_t counted = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    // The recomputed forward casts the same values at the same scales, so the figures are the
    // same tallies, not twice them.
    for (const char* count : {"overflow", "underflow", "non_finite"})
      EXPECT_EQ(a[i]["fp8"][count], b[i]["fp8"][count]) << count << " at line " << i;
    counted += a[i]["fp8"]["underflow"].get<int64_t>();
    // The same products in a different order of kernels: the losses agree to float rounding.
    EXPECT_NEAR(a[i]["loss"].get<double>(), b[i]["loss"].get<double>(), 1e-4);
  }
  EXPECT_GT(counted, 0) << "the first steps' scales of 1 flush small gradients to zero";
}

// The GPT-2 block recomputing its whole forward, and Llama's gated MLP recomputing its gating,
// whose kernel then writes the down projection's fp8 x copies again.
TEST(Fp8Train, RecomputedForwardCountsEachTensorOnce) {
  const std::string gated =
      "--set model.activation=swiglu --set model.norm_kind=rmsnorm --set model.bias=false ";
  for (const auto& [model, mode] : {std::pair<std::string, std::string>{"", "full"},
                                    std::pair<std::string, std::string>{gated, "norm_act"}}) {
    SCOPED_TRACE(model + mode);
    recomputed_forward_counts_each_tensor_once(model, mode);
  }
}

TEST(Fp8Train, RefusesWhatItCannotRun) {
  TempDir dir("fp8_train_refuses");
  test::expect_one_line_error(
      test::run_hwt(lm_args(dir, "bad", "--set train.precision=fp8 --set train.fp8_history=0"),
                    dir),
      2, "train.fp8_history=0 must be at least 1");
  test::expect_one_line_error(
      test::run_hwt(lm_args(dir, "bad", "--set train.precision=fp8 --set train.fp8_margin=-1"),
                    dir),
      2, "train.fp8_margin=-1 must be from 0 to 64");
}

}  // namespace
}  // namespace hwt
