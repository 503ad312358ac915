// Efficiency model of one GEMM on one GPU (docs/shape.md has the derivation and every
// constant's origin). Time = the best of a small set of tile shapes and split-K factors of
//   max(max(compute, memory) + split-K reduction + kernel_us, launch_us),
// where compute counts whole tiles (tile quantisation), whole waves of tiles over the SMs
// (wave quantisation, softened by `wave_tail` for stream-K/persistent kernels), whole K steps
// plus a per-tile prologue, and runs slower when a leading dimension is poorly aligned.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>

#include "backend/gemm.h"
#include "core/gemm_shape.h"
#include "core/precision.h"
#include "hw/gpu_catalog.h"

namespace hwt {

// Alignment classes of the worst leading dimension: 1, 2, 4, 8, 16, 32 and 64 bytes; 128 bytes
// and more run at full speed.
inline constexpr int kAlignClasses = 7;

// Per-GPU, per-precision constants; `hwt shape --sweep` fits them on the GPU present.
struct GemmConstants {
  double peak_fraction = 0.8;     // of the datasheet rate, reached by the largest tiles
  double tile_overhead = 48;      // c in tile efficiency 1/(1 + c(1/TM + 1/TN)), normalised
  double k_overhead = 2;          // extra K steps per tile: prologue, epilogue
  double wave_tail = 0.5;         // cost of a partial last wave: 0 free, 1 a full wave
  double kernel_us = 3;           // fixed GPU time per GEMM kernel, microseconds
  double launch_us = 10;          // floor per GEMM in back-to-back launches (host issue rate)
  double memory_fraction = 0.85;  // of datasheet bandwidth reached by streaming operands
  std::array<double, kAlignClasses> align{};  // speed factor per alignment class
};

// Defaults for an architecture before any calibration (docs/shape.md says where they come from).
GemmConstants default_constants(GpuArch arch);

// The caveat every figure for an accelerator hwt cannot run on (AMD, TPU) carries.
std::string not_measured_note(GpuArch arch);

struct GemmPrediction {
  double seconds = 0;
  double tflops = 0;
  int tile_m = 0, tile_n = 0, split_k = 1;
  double tile_efficiency = 1;  // useful share of the output tiles computed
  double wave_efficiency = 1;  // busy share of the SM-waves
  int align_bytes = 128;       // worst leading dimension's alignment
  double align_factor = 1;
  bool memory_bound = false;
};

class GemmModel {
 public:
  GemmModel(const GpuSpec& gpu, Precision precision, GemmConstants constants);
  GemmModel(const GpuSpec& gpu, Precision precision);  // default constants

  GemmPrediction predict(const GemmShape& s) const;

  const GpuSpec& gpu() const { return gpu_; }
  Precision precision() const { return precision_; }
  const GemmConstants& constants() const { return c_; }

 private:
  GpuSpec gpu_;
  Precision precision_;
  GemmConstants c_;
};

// Seconds one GEMM takes on a real GPU, as training runs it (measure/gemm_timer.h).
using GemmMeasure = std::function<double(const GemmCall&)>;

// Largest power of two (up to 128) dividing the byte length of `elements` elements.
int alignment_bytes(int64_t elements, int element_bytes);
int align_class(int bytes);  // index into GemmConstants::align; kAlignClasses for >= 128
// The worst alignment over the leading dimensions (and batch strides) of A, B and C.
int worst_alignment_bytes(const GemmShape& s, int element_bytes);

}  // namespace hwt
