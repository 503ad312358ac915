// The GEMM efficiency model: alignment, tile and wave quantisation, the memory roofline, and
// fitting its constants back from timings it generated itself.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "analysis/gemm_calibration.h"
#include "analysis/gemm_sweep.h"
#include "analysis/stats.h"
#include "analysis/sweep_fit.h"
#include "core/error.h"

namespace hwt {
namespace {

const GpuSpec& h200() {
  static const GpuCatalog c = load_gpu_catalog();
  return c.find("H200");
}

double tflops(const GemmModel& m, int64_t mm, int64_t n, int64_t k) {
  return m.predict({mm, n, k, 1, false, true}).tflops;
}

TEST(GemmModel, Alignment) {
  EXPECT_EQ(alignment_bytes(4096, 2), 128);
  EXPECT_EQ(alignment_bytes(4090, 2), 4);
  EXPECT_EQ(alignment_bytes(4104, 2), 16);
  EXPECT_EQ(alignment_bytes(50257, 2), 2);
  EXPECT_EQ(alignment_bytes(50304, 2), 128);
  EXPECT_EQ(alignment_bytes(33, 4), 4);
  EXPECT_EQ(align_class(1), 0);
  EXPECT_EQ(align_class(16), 4);
  EXPECT_EQ(align_class(128), kAlignClasses);
  // y = x.W^T: K is the leading dimension of both inputs, N of the output; M never is.
  const GemmShape fwd{8191, 4096, 4096, 1, false, true};
  EXPECT_EQ(worst_alignment_bytes(fwd, 2), 128);
  EXPECT_EQ(worst_alignment_bytes({8192, 4096, 4090, 1, false, true}, 2), 4);
  EXPECT_EQ(worst_alignment_bytes({50257, 768, 8192, 1, true, false}, 2), 2);
}

TEST(GemmModel, K4090IsFarSlowerThanK4096) {
  // Measured on the H200 (pytorch_h200_result.json): 248 vs 753 TFLOP/s at M = 16384, N = 4K.
  const GemmModel m(h200(), Precision::Bf16);
  const double aligned = tflops(m, 16384, 4 * 4096, 4096);
  const double misaligned = tflops(m, 16384, 4 * 4090, 4090);
  EXPECT_GT(aligned, 650);
  EXPECT_LT(aligned, 989.5);
  EXPECT_LT(misaligned, 0.5 * aligned);
  EXPECT_EQ(m.predict({16384, 4 * 4090, 4090, 1, false, true}).align_bytes, 4);
  // 16-byte aligned but not 128: a smaller loss (654 measured for K = 4104).
  const double k4104 = tflops(m, 16384, 4 * 4104, 4104);
  EXPECT_LT(k4104, aligned);
  EXPECT_GT(k4104, 2 * misaligned);
}

TEST(GemmModel, TileQuantisation) {
  const GemmModel m(h200(), Precision::Bf16);
  // One row past a multiple of every tile height: a nearly empty extra row of tiles.
  const GemmPrediction full = m.predict({8192, 8192, 4096, 1, false, true});
  const GemmPrediction extra = m.predict({8193, 8192, 4096, 1, false, true});
  EXPECT_DOUBLE_EQ(full.tile_efficiency, 1.0);
  EXPECT_LT(extra.tile_efficiency, 1.0);
  EXPECT_LT(extra.tflops, full.tflops);
}

TEST(GemmModel, WaveQuantisation) {
  const GemmModel m(h200(), Precision::Bf16);
  // 12 x 11 = 132 tiles of 256x128 fill the 132 SMs once; 12 x 12 = 144 spill into a second wave.
  const GemmPrediction one = m.predict({3072, 1408, 8192, 1, false, true});
  const GemmPrediction spill = m.predict({3072, 1536, 8192, 1, false, true});
  EXPECT_LT(spill.tflops, one.tflops);
  EXPECT_LT(spill.wave_efficiency, 1.0);
}

TEST(GemmModel, SmallGemmsAreMemoryOrLaunchBound) {
  const GemmModel m(h200(), Precision::Bf16);
  const GemmPrediction classifier = m.predict({16384, 2, 768, 1, false, true});
  EXPECT_LT(classifier.tflops, 10);
  const GemmPrediction tiny = m.predict({64, 64, 64, 1, false, true});
  EXPECT_GE(tiny.seconds, m.constants().launch_us * 1e-6);
  // Long K over few output tiles splits K to use more SMs.
  EXPECT_GT(m.predict({768, 768, 65536, 1, true, false}).split_k, 1);
}

TEST(GemmModel, EveryCatalogGpuPredictsEveryPrecisionItSupports) {
  const GpuCatalog catalog = load_gpu_catalog();
  for (const GpuSpec& g : catalog.gpus())
    for (Precision p : kAllPrecisions) {
      if (g.peak_tflops(p) <= 0) {
        EXPECT_THROW(GemmModel(g, p), InputError) << g.name;
        continue;
      }
      const GemmModel m(g, p);
      const double t = tflops(m, 8192, 8192, 8192);
      EXPECT_GT(t, 0.5 * g.peak_tflops(p)) << g.name << " " << precision_name(p);
      EXPECT_LE(t, g.peak_tflops(p)) << g.name << " " << precision_name(p);
    }
}

TEST(GemmFit, RecoversConstantsFromItsOwnTimings) {
  GemmConstants truth = default_constants(GpuArch::Hopper);
  truth.peak_fraction = 0.72;
  truth.tile_overhead = 90;
  truth.k_overhead = 3.5;
  truth.wave_tail = 0.3;
  truth.kernel_us = 2.5;
  truth.launch_us = 9;
  truth.align = {0.2, 0.25, 0.31, 0.45, 0.8, 0.86, 0.93};
  const GemmModel real(h200(), Precision::Bf16, truth);
  std::vector<GemmSample> fit, held;
  for (const SweepShape& s : sweep_grid())
    (s.held_out ? held : fit).push_back({s.shape, real.predict(s.shape).seconds});
  EXPECT_GE(held.size(), 150u);
  const GemmConstants start = default_constants(GpuArch::Hopper);
  const FitQuality before = fit_quality(GemmModel(h200(), Precision::Bf16, start), held);
  const GemmConstants got = fit_constants(h200(), Precision::Bf16, fit, start);
  const FitQuality after = fit_quality(GemmModel(h200(), Precision::Bf16, got), held);
  EXPECT_LT(after.median_abs_error, 0.02);
  EXPECT_LT(after.median_abs_error, before.median_abs_error);
  EXPECT_GT(after.spearman, 0.99);
  EXPECT_NEAR(got.peak_fraction, truth.peak_fraction, 0.05);
}

TEST(GemmFit, SweepPipelineOnSyntheticTimings) {
  // A stand-in GPU: the model with other constants, and one shape cuBLASLt "cannot run".
  GemmConstants truth = default_constants(GpuArch::Hopper);
  truth.peak_fraction = 0.75;
  truth.wave_tail = 0.8;
  const GemmModel real(h200(), Precision::Bf16, truth);
  const GemmShape failing = sweep_grid().front().shape;
  const SweepResult r = run_gemm_sweep(h200(), Precision::Bf16, [&](const GemmCall& g) {
    return g.shape == failing ? std::nan("") : real.predict(g.shape).seconds;
  });
  EXPECT_EQ(r.seconds.size(), r.shapes.size());
  EXPECT_EQ(r.all.count, r.shapes.size() - 1);
  EXPECT_GT(r.held_out.spearman, 0.99);
  EXPECT_LT(r.held_out.median_abs_error, 0.02);
  const std::string csv = gemm_sweep_csv(r, h200(), Precision::Bf16);
  EXPECT_EQ(static_cast<size_t>(std::count(csv.begin(), csv.end(), '\n')), r.shapes.size() + 1);
  EXPECT_NE(gemm_sweep_svg(r, h200(), Precision::Bf16).find("held out"), std::string::npos);
}

TEST(Stats, SpearmanAndMedian) {
  EXPECT_DOUBLE_EQ(spearman({1, 2, 3, 4}, {10, 20, 30, 1000}), 1.0);
  EXPECT_DOUBLE_EQ(spearman({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
  EXPECT_NEAR(spearman({1, 2, 2, 3}, {1, 2, 3, 4}), 0.9487, 1e-4);
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
}

class CalibrationFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("hwt_calib_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(path(name)) << text;
  }
  std::filesystem::path dir_;
};

TEST_F(CalibrationFiles, RoundTripAndLookupOrder) {
  Calibration c;
  c.gpu = "H200";
  c.precision = Precision::Bf16;
  c.device = "NVIDIA H200";
  c.samples = 160;
  c.constants = default_constants(GpuArch::Hopper);
  c.constants.peak_fraction = 0.77;
  save_calibration(path("mine.json"), c);
  const Calibration back = load_calibration(path("mine.json"));
  EXPECT_DOUBLE_EQ(back.constants.peak_fraction, 0.77);
  EXPECT_DOUBLE_EQ(back.constants.tile_overhead, c.constants.tile_overhead);
  EXPECT_EQ(back.constants.align, c.constants.align);
  EXPECT_EQ(back.device, "NVIDIA H200");

  const ResolvedConstants explicit_file =
      resolve_constants(h200(), Precision::Bf16, path("mine.json"));
  EXPECT_DOUBLE_EQ(explicit_file.constants.peak_fraction, 0.77);
  EXPECT_THROW(resolve_constants(h200(), Precision::Fp16, path("mine.json")), InputError);

  // The cache folder comes before the shipped file and the defaults.
  const std::string cache = path("cache");
  ::setenv("HWT_CACHE_DIR", cache.c_str(), 1);
  save_calibration(cache + "/" + calibration_file_name("H200", Precision::Bf16), c);
  const ResolvedConstants cached = resolve_constants(h200(), Precision::Bf16, "");
  EXPECT_DOUBLE_EQ(cached.constants.peak_fraction, 0.77);
  EXPECT_NE(cached.origin.find(cache), std::string::npos);
  const ResolvedConstants fp16 = resolve_constants(h200(), Precision::Fp16, "");
  EXPECT_EQ(fp16.origin, "defaults for hopper");
  ::unsetenv("HWT_CACHE_DIR");
}

TEST_F(CalibrationFiles, BadFilesNameTheKey) {
  write("bad.json", R"({"gpu": "H200", "precision": "bf16", "constants": {"peak_fraction": "x"}})");
  try {
    load_calibration(path("bad.json"));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("constants.peak_fraction"), std::string::npos) << e.what();
  }
  write("broken.json", "{");
  EXPECT_THROW(load_calibration(path("broken.json")), InputError);
  EXPECT_THROW(load_calibration(path("missing.json")), InputError);
}

}  // namespace
}  // namespace hwt
