// `hwt shape` end to end through the binary: reports, JSON, plots and one-line input errors.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace hwt {
namespace {

struct Result {
  int code = -1;
  std::string out;  // stdout and stderr
};

Result hwt(const std::string& args) {
  const std::string cmd = std::string(HWT_BINARY) + " shape " + args + " 2>&1";
  Result r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

const std::string kGpt2 =
    "--set model.head=lm --set model.causal=true --set model.hidden=768 --set model.heads=12 "
    "--set model.ffn=3072 --set model.layers=2 --set model.max_seq=512 --set "
    "model.vocab_size=50257 --batch 8 --seq 512";
const std::string kUnpadded = " --set model.vocab_multiple=1";

TEST(ShapeCli, ReportsGemmsRulesAndSuggestions) {
  const Result r = hwt(kGpt2 + kUnpadded + " --gpu H200");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("GEMMs of one training step"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("head.lm"), std::string::npos);
  EXPECT_NE(r.out.find("stored vocabulary = 50257 is not a multiple of 64"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("vocab stored as 50257 -> 50304 rows"), std::string::npos) << r.out;
  // By default hwt pads the stored vocabulary itself: no rule is broken, nothing to suggest.
  const Result padded = hwt(kGpt2 + " --gpu H200");
  ASSERT_EQ(padded.code, 0) << padded.out;
  EXPECT_EQ(padded.out.find("stored vocabulary"), std::string::npos) << padded.out;
  EXPECT_NE(padded.out.find("50304"), std::string::npos) << padded.out;
}

TEST(ShapeCli, JsonAndPlots) {
  const auto dir = std::filesystem::temp_directory_path() / "hwt_shape_cli_test";
  std::filesystem::remove_all(dir);
  const Result r = hwt(kGpt2 + kUnpadded + " --gpu a100-80gb --json --out " + dir.string());
  ASSERT_EQ(r.code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["gpu"], "A100-80GB");
  EXPECT_EQ(j["config"]["vocab_size"], 50257);
  EXPECT_EQ(j["rules"][0]["rule"], "vocab");
  EXPECT_GT(j["gemms"].size(), 10u);
  EXPECT_GT(j["suggestions"].size(), 0u);
  for (const char* f : {"shape.json", "shape_hidden.svg", "shape_head_dim.svg"})
    EXPECT_TRUE(std::filesystem::exists(dir / f)) << f;
  std::ifstream svg(dir / "shape_hidden.svg");
  const std::string text((std::istreambuf_iterator<char>(svg)), {});
  EXPECT_NE(text.find("<svg"), std::string::npos);
  EXPECT_NE(text.find("predicted"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(ShapeCli, InputErrorsAreOneLineWithCode2) {
  const Result gpu = hwt("--gpu B900");
  EXPECT_EQ(gpu.code, 2);
  EXPECT_NE(gpu.out.find("unknown GPU 'B900' (known: H200"), std::string::npos) << gpu.out;
  EXPECT_EQ(hwt("--precision int4").code, 2);
  EXPECT_EQ(hwt("--tolerance 2").code, 2);
  EXPECT_EQ(hwt("--gpu V100 --precision bf16").code, 2);  // V100 has no bf16
  EXPECT_EQ(hwt("--calibration /nonexistent.json").code, 2);
  EXPECT_EQ(hwt("--catalog /nonexistent.toml").code, 2);
}

TEST(ShapeCli, ListsTheCatalog) {
  const Result r = hwt("--list-gpus");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("RTX4090"), std::string::npos);
  // Each row counts its own units: NVIDIA's SMs, AMD's compute units, a TPU's matrix units.
  EXPECT_NE(r.out.find("132 SMs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("304 CUs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("8 MXUs"), std::string::npos) << r.out;
}

TEST(ShapeCli, MeasureWithoutAGpuIsAnInputError) {
  const Result r = hwt("--measure");
  if (r.code == 0) GTEST_SKIP() << "skipped: a GPU is present";
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(r.out.find("CUDA") != std::string::npos) << r.out;
}

}  // namespace
}  // namespace hwt
