// Beyond NVIDIA: the catalogue's TPU and AMD entries, the GEMM model's per-architecture tiling
// and wave rules for them (128 x 128 MXUs, compute units) and the commands that price them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "analysis/gemm_model.h"
#include "analysis/step_estimate.h"
#include "cli_util.h"
#include "core/error.h"
#include "hw/gpu_catalog.h"

namespace hwt {
namespace {

const GpuCatalog& catalog() {
  static const GpuCatalog c = load_gpu_catalog();
  return c;
}

GemmShape gemm(int64_t m, int64_t n, int64_t k) {
  GemmShape s;
  s.m = m, s.n = n, s.k = k;
  return s;
}

TEST(Accelerators, EveryEntryLoadsWithItsSources) {
  for (const char* name : {"TPU-v4", "TPU-v5e", "TPU-v5p", "MI250X-GCD", "MI300X"}) {
    const GpuSpec& g = catalog().find(name);
    EXPECT_FALSE(is_nvidia(g.arch)) << name;
    EXPECT_GT(g.peak_tflops(Precision::Bf16), g.peak_tflops(Precision::Fp32)) << name;
    EXPECT_GT(g.memory_gb, 0) << name;
    EXPECT_GT(g.price_per_hour, 0) << name;
    EXPECT_NE(g.source.find("https://"), std::string::npos) << name;
    EXPECT_NE(g.price_source.find("https://"), std::string::npos) << name;
    const std::optional<LinkKind> link = g.scale_up_link();
    ASSERT_TRUE(link) << name;
    EXPECT_FALSE(g.link(*link).source.empty()) << name;
    EXPECT_LE(g.link(*link).bus_gbs, g.link(*link).line_gbs) << name;
  }
  // The Cloud TPU system-architecture pages: 2 TensorCores x 4 MXUs on v4 and v5p, 1 x 4 on v5e.
  EXPECT_EQ(catalog().find("tpu v4").sms, 8);
  EXPECT_EQ(catalog().find("tpu-v5e").sms, 4);
  EXPECT_EQ(catalog().find("TPU-v5p").sms, 8);
  EXPECT_EQ(catalog().find("tpu-v5e").arch, GpuArch::Tpu);
  EXPECT_EQ(catalog().find("tpu-v5p").scale_up_link(), LinkKind::Ici);
  EXPECT_DOUBLE_EQ(catalog().find("tpu-v5p").peak_tflops(Precision::Bf16), 459);
  // XLA's fp32 matmuls: six bf16 passes (HIGHEST), tf32-like three (HIGH).
  EXPECT_NEAR(catalog().find("tpu-v5e").peak_tflops(Precision::Tf32), 197.0 / 3, 0.05);
  EXPECT_EQ(catalog().find("tpu-v5e").peak_tflops(Precision::Fp16), 0);  // no fp16 on the MXU
  EXPECT_EQ(catalog().find("tpu-v5e").tdp_w, 0);                         // not published
  EXPECT_EQ(catalog().find("tpu-v4").tdp_w, 192);                        // the measured maximum
  const GpuSpec& mi300x = catalog().find("mi300x");
  EXPECT_EQ(mi300x.arch, GpuArch::Cdna3);
  EXPECT_EQ(mi300x.sms, 304);
  EXPECT_DOUBLE_EQ(mi300x.peak_tflops(Precision::Fp8), 2614.9);
  EXPECT_EQ(mi300x.scale_up_link(), LinkKind::Xgmi);
  EXPECT_EQ(catalog().match_device("AMD Instinct MI300X")->name, "MI300X");
  // The MI250X is catalogued per GCD, found by the module's name too; it has no TF32, which
  // runs on the fp32 matrix cores.
  const GpuSpec& gcd = catalog().find("MI250X");
  EXPECT_EQ(gcd.name, "MI250X-GCD");
  EXPECT_EQ(gcd.arch, GpuArch::Cdna2);
  EXPECT_EQ(gcd.sms, 110);
  EXPECT_DOUBLE_EQ(gcd.memory_gb, 64);
  EXPECT_DOUBLE_EQ(gcd.peak_tflops(Precision::Tf32), 47.85);
  EXPECT_EQ(parse_link_kind("ici"), LinkKind::Ici);
  EXPECT_EQ(parse_link_kind("xgmi"), LinkKind::Xgmi);
  EXPECT_EQ(multiprocessor_name(GpuArch::Tpu), "MXUs");
  EXPECT_EQ(multiprocessor_name(GpuArch::Cdna3), "CUs");
  EXPECT_EQ(multiprocessor_name(GpuArch::Hopper), "SMs");
}

TEST(Accelerators, UserCatalogsNameTheNewArchitecturesAndLinks) {
  GpuCatalog c;
  c.load_string(
      "[[gpu]]\nname = \"MyTpu\"\narch = \"tpu\"\nsms = 4\nboost_clock_mhz = 1000\n"
      "memory_gb = 16\nmemory_bandwidth_gbs = 800\nl2_mb = 0\ntdp_w = 0\nprice_per_hour = 1\n"
      "cuda_core_tflops = { fp32 = 10 }\ntensor_tflops = { bf16 = 100 }\nsource = \"s\"\n"
      "price_source = \"p\"\n[gpu.links.ici]\nline_gbs = 100\nbus_gbs = 80\nlatency_us = 1\n"
      "source = \"l\"\n",
      "mine.toml");
  EXPECT_EQ(c.find("mytpu").arch, GpuArch::Tpu);
  EXPECT_EQ(c.find("mytpu").link(LinkKind::Ici).bus_gbs, 80);
  try {
    c.load_string("[[gpu]]\nname = \"B\"\narch = \"rdna3\"\n", "mine.toml");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("known: volta, turing, ampere, ada, hopper, cdna2, "
                                         "cdna3, tpu"),
              std::string::npos)
        << e.what();
  }
}

// XLA pads N and K to the 128 x 128 MXU: a hidden size of 1000 costs what 1024 does, so its
// FLOP rate is lower by the padding, (1000/1024)^2 for a GEMM with both padded.
TEST(Accelerators, TpuGemmsQuantiseTo128) {
  const GemmModel v5e(catalog().find("tpu-v5e"), Precision::Bf16);
  const GemmPrediction padded = v5e.predict(gemm(8192, 1000, 1000));
  const GemmPrediction whole = v5e.predict(gemm(8192, 1024, 1024));
  // Same tiles, same K steps, compute-bound: equal times up to rounding.
  EXPECT_NEAR(padded.seconds, whole.seconds, 1e-12 * whole.seconds);
  EXPECT_NEAR(padded.tflops / whole.tflops, (1000.0 / 1024) * (1000.0 / 1024), 1e-9);
  EXPECT_EQ(padded.tile_n, 128);
  EXPECT_NEAR(padded.tile_efficiency, 1000.0 / 1024, 1e-12);
  EXPECT_EQ(whole.tile_efficiency, 1.0);
  // No alignment penalty beyond the padding, no split-K.
  EXPECT_EQ(padded.align_factor, 1.0);
  EXPECT_EQ(v5e.predict(gemm(1024, 1024, 65536)).split_k, 1);
  // One 128-wide step further costs a whole extra tile column and K step.
  EXPECT_GT(v5e.predict(gemm(8192, 1025, 1025)).seconds, 1.1 * whole.seconds);
}

// Waves over the MXUs: on the v5p's eight, N = 1152 (9 columns of 128, no padding) leaves a
// partial last wave whatever the row-block height: 9 x 2, 9 x 4 or 9 x 8 tiles are never a
// multiple of 8. The best (256-row blocks, 36 tiles, 5 waves) does 12.5% more work than N = 1024
// (16 tiles of 512 rows, 2 whole waves) in about a third more time.
TEST(Accelerators, TpuWavesAreCountedOverMxus) {
  const GemmModel v5p(catalog().find("tpu-v5p"), Precision::Bf16);
  const GemmPrediction nine = v5p.predict(gemm(1024, 1152, 8192));
  const GemmPrediction eight = v5p.predict(gemm(1024, 1024, 8192));
  EXPECT_FALSE(nine.memory_bound);
  EXPECT_EQ(nine.tile_efficiency, 1.0);  // a multiple of 128: no tile quantisation
  EXPECT_NEAR(nine.wave_efficiency, 36.0 / 40, 1e-12);
  EXPECT_EQ(eight.wave_efficiency, 1.0);
  EXPECT_LT(nine.tflops, 0.9 * eight.tflops);
}

// AMD: hipBLASLt-like macro tiles up to 256 x 256, waves over the compute units, and slower
// kernels for poorly aligned leading dimensions.
TEST(Accelerators, AmdGemmsUseMacroTilesOverComputeUnits) {
  const GemmModel mi300x(catalog().find("mi300x"), Precision::Bf16);
  const GemmPrediction big = mi300x.predict(gemm(8192, 8192, 8192));
  EXPECT_EQ(big.tile_m, 256);
  EXPECT_EQ(big.tile_n, 256);
  // 304 tiles of 256 x 256 fill one wave of the 304 CUs; one more row of tiles starts another.
  const GemmPrediction full = mi300x.predict(gemm(256 * 19, 256 * 16, 8192));
  EXPECT_EQ(full.wave_efficiency, 1.0);
  const GemmPrediction over = mi300x.predict(gemm(256 * 20, 256 * 16, 8192));
  EXPECT_LT(over.wave_efficiency, 1.0);
  EXPECT_LT(over.tflops, full.tflops);
  // K = 4090 bf16 rows are 4-byte aligned: a slower kernel, as on NVIDIA GPUs.
  EXPECT_LT(mi300x.predict(gemm(8192, 4096, 4090)).tflops,
            0.5 * mi300x.predict(gemm(8192, 4096, 4096)).tflops);
  // The NVIDIA tiles are unchanged: the largest GEMMs still pick 256 x 128 or 128 x 256.
  const GemmPrediction h100 =
      GemmModel(catalog().find("h100-sxm"), Precision::Bf16).predict(gemm(8192, 8192, 8192));
  EXPECT_EQ(h100.tile_m * h100.tile_n, 256 * 128);
}

TEST(Accelerators, AttentionIsAssumedAtTheH200ShareIn16BitOnly) {
  for (GpuArch a : {GpuArch::Tpu, GpuArch::Cdna2, GpuArch::Cdna3}) {
    EXPECT_DOUBLE_EQ(attention_peak_fraction(a, Precision::Bf16, 64, false),
                     attention_peak_fraction(GpuArch::Hopper, Precision::Bf16, 64, false));
    EXPECT_EQ(attention_peak_fraction(a, Precision::Tf32, 64, false), 0.0);
  }
}

TEST(Accelerators, ShapeRunsOnTpuAndAmdWithTheCaveat) {
  test::TempDir tmp("accel_shape");
  const test::CliResult tpu = test::run_hwt("shape --config bert_base --gpu tpu-v5e", tmp);
  ASSERT_EQ(tpu.exit_code, 0) << tpu.err;
  EXPECT_NE(tpu.out.find("TPU-v5e (tpu, 4 MXUs"), std::string::npos) << tpu.out;
  EXPECT_NE(tpu.out.find("hwt has no backend for TPUs"), std::string::npos) << tpu.out;
  const test::CliResult amd = test::run_hwt("shape --config bert_base --gpu mi300x", tmp);
  ASSERT_EQ(amd.exit_code, 0) << amd.err;
  EXPECT_NE(amd.out.find("MI300X (cdna3, 304 CUs"), std::string::npos) << amd.out;
  EXPECT_NE(amd.out.find("hwt has no backend for AMD GPUs"), std::string::npos) << amd.out;
  const test::CliResult h200 = test::run_hwt("shape --config bert_base --gpu h200", tmp);
  EXPECT_EQ(h200.out.find("no backend"), std::string::npos);
  const test::CliResult json = test::run_hwt("shape --config bert_base --gpu tpu-v5p --json", tmp);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(nlohmann::json::parse(json.out)["note"].get<std::string>().find("not checked"),
            std::string::npos);
}

// The thesis's question, GPU against TPU, as estimates: every GPU gets its row and the AMD and
// TPU rows say that they are estimates.
TEST(Accelerators, EstimateComparesGpuTpuAndAmd) {
  test::TempDir tmp("accel_estimate");
  const test::CliResult r =
      test::run_hwt("estimate --config bert_base --gpu h100-sxm --gpu tpu-v5p --gpu mi300x --json", tmp);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 3u);
  EXPECT_EQ(j[0]["gpu"], "H100-SXM");
  EXPECT_EQ(j[1]["gpu"], "TPU-v5p");
  EXPECT_EQ(j[2]["gpu"], "MI300X");
  for (const auto& row : j) EXPECT_GT(row["step_s"].get<double>(), 0) << row["gpu"];
  EXPECT_TRUE(j[0]["notes"].empty());
  const std::string tpu_notes = j[1]["notes"].dump();
  EXPECT_NE(tpu_notes.find("hwt has no backend for TPUs"), std::string::npos) << tpu_notes;
  EXPECT_NE(tpu_notes.find("no power figure is published"), std::string::npos) << tpu_notes;
  EXPECT_TRUE(j[1]["power_w"].is_null());
  EXPECT_TRUE(j[1]["energy_j"].is_null());
  EXPECT_GT(j[2]["power_w"].get<double>(), 0);
  EXPECT_NE(j[2]["notes"].dump().find("hwt has no backend for AMD GPUs"), std::string::npos);
  // hwt compare ranks the estimated GPUs under the thesis's weight sets; energy is left out
  // (the v5p has no published power), utilisation and quality too (nothing ran).
  tmp.write("est.json", r.out);
  const test::CliResult ranked = test::run_hwt("compare " + (tmp / "est.json") + " --json", tmp);
  ASSERT_EQ(ranked.exit_code, 0) << ranked.err;
  const nlohmann::json c = nlohmann::json::parse(ranked.out);
  EXPECT_NE(c.dump().find("TPU-v5p (estimate)"), std::string::npos) << ranked.out;
  // Each GPU's time is that of 10^9 tokens at its estimated rate (the same work everywhere);
  // 1e-9: the step count is a quotient of doubles.
  const double h100_s = c["runs"][0]["metrics"]["time"].get<double>();
  EXPECT_NEAR(h100_s, 1e9 / j[0]["tokens_per_s"].get<double>(), 1e-9 * h100_s);
  EXPECT_NE(c.dump().find("energy left out of every score: TPU-v5p (estimate) has none"),
            std::string::npos)
      << ranked.out;
  tmp.write("not_estimate.json", "{\"gpu\": 1}");
  EXPECT_EQ(test::run_hwt("compare " + (tmp / "not_estimate.json") + " " + (tmp / "est.json"), tmp)
                .exit_code,
            2);
  const test::CliResult table =
      test::run_hwt("estimate --config bert_base --gpu h100-sxm --gpu tpu-v5p --gpu mi300x", tmp);
  ASSERT_EQ(table.exit_code, 0) << table.err;
  for (const char* name : {"H100-SXM", "TPU-v5p", "MI300X", "not checked against hardware"})
    EXPECT_NE(table.out.find(name), std::string::npos) << name << "\n" << table.out;
}

// Data parallel: without --link each accelerator uses its own scale-up link; an NVIDIA link
// asked of a TPU is refused.
TEST(Accelerators, DataParallelUsesIciAndInfinityFabric) {
  test::TempDir tmp("accel_dp");
  const test::CliResult r = test::run_hwt(
      "estimate --config bert_base --gpu tpu-v5p --gpu mi300x --gpu mi250x --gpus 8 --json", tmp);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 24u);  // 3 GPUs x 4 counts (1, 2, 4, 8) x ZeRO 0 and 1
  EXPECT_EQ(j[0]["link"], "ici");
  EXPECT_EQ(j[0]["bus_gbs"], 480);
  EXPECT_EQ(j[8]["link"], "xgmi");
  EXPECT_EQ(j[16]["link"], "xgmi");
  EXPECT_EQ(j[19]["gpus"], 8);
  EXPECT_GT(j[19]["comm_s"].get<double>(), j[11]["comm_s"].get<double>());  // 50 vs 448 GB/s
  const test::CliResult bad =
      test::run_hwt("estimate --config bert_base --gpu tpu-v5e --gpus 2 --link nvlink", tmp);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("TPU-v5e has no nvlink figures"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace hwt
