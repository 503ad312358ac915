// The shipped GPU catalog and the validation of user catalogs.
#include <gtest/gtest.h>

#include "core/error.h"
#include "hw/gpu_catalog.h"

namespace hwt {
namespace {

// A valid entry; tests break one key at a time.
std::string entry(const std::string& name, const std::string& extra = "",
                  const std::string& sms = "sms = 10") {
  return "[[gpu]]\nname = \"" + name + "\"\narch = \"ampere\"\n" + sms +
         "\nboost_clock_mhz = 1500\nmemory_gb = 16\nmemory_bandwidth_gbs = 500\nl2_mb = 4\n"
         "tdp_w = 100\nprice_per_hour = 0.5\ncuda_core_tflops = { fp32 = 10 }\n"
         "tensor_tflops = { bf16 = 80, fp16 = 80 }\nsource = \"my datasheet\"\n"
         "price_source = \"my invoice\"\n" +
         extra;
}

std::string error_of(const std::string& text) {
  GpuCatalog c;
  try {
    c.load_string(text, "mine.toml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(GpuCatalog, ShipsTheGpusTheAdvisorNeedsWithSources) {
  const GpuCatalog c = load_gpu_catalog();
  for (const char* name : {"H200", "H100-SXM", "H100-PCIe", "A100-40GB", "A100-80GB", "A10", "L4",
                           "V100", "T4", "RTX3090", "RTX4090"}) {
    const GpuSpec& g = c.find(name);
    EXPECT_GT(g.sms, 0) << name;
    EXPECT_GT(g.memory_bandwidth_gbs, 0) << name;
    EXPECT_GT(g.price_per_hour, 0) << name;
    EXPECT_FALSE(g.source.empty()) << name;
    EXPECT_FALSE(g.price_source.empty()) << name;
    EXPECT_GT(g.peak_tflops(Precision::Fp32), 0) << name;
    EXPECT_GT(g.peak_tflops(Precision::Fp16), g.peak_tflops(Precision::Fp32)) << name;
  }
  // The prices of the cost model of Chen & Sköld (Chalmers MSc thesis, 2023).
  EXPECT_DOUBLE_EQ(c.find("V100").price_per_hour, 2.0);
  EXPECT_DOUBLE_EQ(c.find("A100-40GB").price_per_hour, 4.0);
  EXPECT_DOUBLE_EQ(c.find("T4").price_per_hour, 0.4);
  EXPECT_DOUBLE_EQ(c.find("A10").price_per_hour, 1.1);
  const GpuSpec& h200 = c.find("h200");
  EXPECT_EQ(h200.sms, 132);
  EXPECT_EQ(h200.arch, GpuArch::Hopper);
  EXPECT_DOUBLE_EQ(h200.peak_tflops(Precision::Bf16), 989.5);
  EXPECT_NE(h200.source_of("l2_mb"), h200.source);  // a per-key source
  EXPECT_EQ(h200.source_of("memory_gb"), h200.source);
  // Without bf16 or tf32 support, tf32 falls back to fp32 CUDA cores and bf16 is unavailable.
  EXPECT_EQ(c.find("V100").peak_tflops(Precision::Bf16), 0);
  EXPECT_DOUBLE_EQ(c.find("V100").peak_tflops(Precision::Tf32), 15.7);
}

TEST(GpuCatalog, FindsByAliasAndDeviceName) {
  const GpuCatalog c = load_gpu_catalog();
  EXPECT_EQ(c.find("rtx 4090").name, "RTX4090");
  EXPECT_EQ(c.match_device("NVIDIA H200")->name, "H200");
  EXPECT_EQ(c.match_device("NVIDIA A100-SXM4-80GB")->name, "A100-80GB");
  EXPECT_EQ(c.match_device("NVIDIA A10")->name, "A10");
  EXPECT_EQ(c.match_device("NVIDIA H100 PCIe")->name, "H100-PCIe");
  EXPECT_EQ(c.match_device("Some Other GPU"), nullptr);
}

TEST(GpuCatalog, UnknownGpuListsTheKnownOnes) {
  const GpuCatalog c = load_gpu_catalog();
  try {
    c.find("B900");
    FAIL() << "no error";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("unknown GPU 'B900'"), std::string::npos) << m;
    EXPECT_NE(m.find("H200"), std::string::npos) << m;
    EXPECT_NE(m.find("RTX4090"), std::string::npos) << m;
  }
}

TEST(GpuCatalog, UserEntriesAddAndReplace) {
  GpuCatalog c = load_gpu_catalog();
  const size_t before = c.gpus().size();
  c.load_string(entry("MyCard") + entry("H200"), "mine.toml");
  EXPECT_EQ(c.gpus().size(), before + 1);
  EXPECT_EQ(c.find("mycard").sms, 10);
  EXPECT_EQ(c.find("H200").sms, 10);
  EXPECT_EQ(c.find("H200").origin, "mine.toml");
}

TEST(GpuCatalog, ValidationNamesFileEntryAndKey) {
  EXPECT_EQ(error_of(entry("A")), "");
  const std::string missing = error_of(entry("A", "", ""));
  EXPECT_NE(missing.find("mine.toml: gpu entry 1 ('A'): sms is missing"), std::string::npos)
      << missing;
  const std::string neg = error_of(entry("A", "", "sms = -3"));
  EXPECT_NE(neg.find("sms must be a positive integer"), std::string::npos) << neg;
  const std::string typo = error_of(entry("A", "memory_bandwith = 3\n"));
  EXPECT_NE(typo.find("memory_bandwith is not a known key"), std::string::npos) << typo;
  const std::string arch = error_of("[[gpu]]\nname = \"B\"\narch = \"pascal\"\n");
  EXPECT_NE(arch.find("gpu entry 1 ('B'): arch 'pascal' is not an architecture"), std::string::npos)
      << arch;
  std::string bad_tdp = entry("C");
  bad_tdp.replace(bad_tdp.find("tdp_w = 100"), 11, "tdp_w = \"lots\"");
  const std::string second = error_of(entry("A") + bad_tdp);
  EXPECT_NE(second.find("gpu entry 2 ('C'): tdp_w must be a number"), std::string::npos) << second;
  const std::string top = error_of("gpus = 3\n");
  EXPECT_NE(top.find("gpus is not a known key"), std::string::npos) << top;
  const std::string syntax = error_of("[[gpu]\nname = 1");
  EXPECT_NE(syntax.find("GPU catalog mine.toml:1"), std::string::npos) << syntax;
  const std::string src = error_of(entry("A", "[gpu.sources]\nwidth = \"x\"\n"));
  EXPECT_NE(src.find("sources.width names no number"), std::string::npos) << src;
}

TEST(GpuCatalog, UnknownPrecisionInARateTable) {
  std::string text = entry("A");
  text.replace(text.find("bf16 = 80"), 9, "int4 = 80");
  const std::string e = error_of(text);
  EXPECT_NE(e.find("tensor_tflops.int4 is not a precision"), std::string::npos) << e;
}

TEST(GpuCatalog, MissingFileIsAnInputError) {
  GpuCatalog c;
  EXPECT_THROW(c.load_file("/nonexistent/gpus.toml"), InputError);
}

}  // namespace
}  // namespace hwt
