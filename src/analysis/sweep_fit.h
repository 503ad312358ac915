// `hwt shape --sweep`: measure the sweep grid, fit the GEMM model's constants on half of it and
// report the model's accuracy on the other half, before and after the fit.
#pragma once

#include <string>
#include <vector>

#include "analysis/gemm_calibration.h"
#include "analysis/gemm_sweep.h"

namespace hwt {

struct SweepResult {
  std::vector<SweepShape> shapes;
  std::vector<double> seconds;  // measured, one per shape; NaN where cuBLASLt could not run it
  GemmConstants start, fitted;
  FitQuality held_out_before;  // default constants, held-out shapes
  FitQuality held_out;         // fitted constants, held-out shapes
  FitQuality all;              // fitted constants, every shape
};

SweepResult run_gemm_sweep(const GpuSpec& gpu, Precision p, const GemmMeasure& measure);

// One row per shape: family, dims, layout, held_out, measured and predicted TFLOP/s.
std::string gemm_sweep_csv(const SweepResult& r, const GpuSpec& gpu, Precision p);
// Predicted against measured TFLOP/s, fitted and held-out shapes apart, with the y = x line.
std::string gemm_sweep_svg(const SweepResult& r, const GpuSpec& gpu, Precision p);

// The same plot for any groups of measured GEMMs.
struct SampleGroup {
  std::string label;
  std::vector<GemmSample> samples;
};
std::string pred_vs_meas_svg(const std::string& title, const std::vector<SampleGroup>& groups,
                             const GemmModel& model);

}  // namespace hwt
