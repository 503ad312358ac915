// Fitting the GEMM model's constants to measured GEMM times, and the calibration files that
// keep them. A file is JSON {gpu, precision, device, samples, constants, quality}; the advisor
// takes the first of: --calibration FILE, the user cache
// ($HWT_CACHE_DIR, else $XDG_CACHE_HOME/hwt, else ~/.cache/hwt)/gemm_<gpu>_<precision>.json,
// the shipped hardware/calibration/gemm_<gpu>_<precision>.json, the architecture defaults.
#pragma once

#include <string>
#include <vector>

#include "analysis/gemm_model.h"

namespace hwt {

struct GemmSample {
  GemmShape shape;
  double seconds = 0;  // measured
};

struct FitQuality {
  size_t count = 0;
  double spearman = 0;          // rank correlation of predicted and measured TFLOP/s
  double median_abs_error = 0;  // median of |predicted / measured TFLOP/s - 1|
  double max_abs_error = 0;
};

FitQuality fit_quality(const GemmModel& model, const std::vector<GemmSample>& samples);

// Coordinate search from `start` minimising the mean squared log ratio of predicted to measured
// time. Alignment factors with no sample in their class keep their start value.
GemmConstants fit_constants(const GpuSpec& gpu, Precision precision,
                            const std::vector<GemmSample>& samples, GemmConstants start);

struct Calibration {
  std::string gpu;  // catalog name
  Precision precision = Precision::Bf16;
  std::string device;  // CUDA device name it was measured on
  size_t samples = 0;  // shapes fitted on
  GemmConstants constants;
  FitQuality quality;  // on the held-out shapes
};

void save_calibration(const std::string& path, const Calibration& c);
Calibration load_calibration(const std::string& path);  // InputError naming file and key

std::string calibration_file_name(const std::string& gpu, Precision p);
std::string calibration_cache_dir();

// The constants the advisor uses for (gpu, precision) and where they came from.
struct ResolvedConstants {
  GemmConstants constants;
  std::string origin;  // file path, or "defaults for <arch>"
};
ResolvedConstants resolve_constants(const GpuSpec& gpu, Precision p,
                                    const std::string& explicit_file);

}  // namespace hwt
