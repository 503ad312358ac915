// A training step's time on a cataloged GPU that need not be at hand: the traced step priced op
// by op — GEMMs by the calibrated GEMM model, hwt's fused attention by the rates its kernels
// reach (measured on an H200, as fractions of the tensor-core peak), every other op by its bytes
// over the GPU's usable memory bandwidth — with energy and cost per step.
#pragma once

#include <string>
#include <vector>

#include "analysis/gemm_model.h"
#include "backend/trace/workload.h"
#include "hw/gpu_catalog.h"

namespace hwt {

// One group of the step's ops (same op, same layer scope with the layer index as '*').
struct OpGroupEstimate {
  std::string name;  // "linear_backward layers.*.mlp.fc1"
  double seconds = 0;
};

struct StepEstimate {
  double gemm_s = 0, attention_s = 0, memory_s = 0, optimizer_s = 0;
  // What the op models miss, fitted on measured steps: the gaps between the step's kernels and
  // the rates kernels sustain below the models' (kOpGapSeconds, kSustainedRateFactor).
  double overhead_s = 0;
  double flops = 0;                      // all traced FLOPs of the step
  std::vector<OpGroupEstimate> slowest;  // the three costliest op groups, slowest first
  std::vector<double> op_seconds;        // each traced op as modelled (overhead apart), in order
  std::vector<std::string> notes;        // what the estimate cannot price

  double seconds() const { return gemm_s + attention_s + memory_s + optimizer_s + overhead_s; }
  // The GPU's mean power over the step as a fraction of its TDP: it rises with the share of the
  // step spent in tensor-core products (kPowerAtNoTensorWork, kPowerPerTensorShare).
  double power_fraction() const;
};

// Fitted (least squares on the relative error) to six training steps measured on an H200 with
// bench/estimate_accuracy.py, rows marked "calib"; the twelve "test" rows were not used
// (docs/benchmarks.md, "Step time estimates"). Assumed to hold on other GPUs.
inline constexpr double kOpGapSeconds = 8.04e-6;
inline constexpr double kSustainedRateFactor = 1.060;

// An op's share of the step: its modelled time with both parts of the overhead. Summed over the
// ops it is StepEstimate::seconds().
inline double with_overhead(double modelled_s) {
  return kSustainedRateFactor * modelled_s + kOpGapSeconds;
}

// GPU power while hwt trains = TDP × (kPowerAtNoTensorWork + kPowerPerTensorShare × the step's
// share of GEMM and attention time), fitted (least squares) to the mean power NVML reported on an
// H200 over the six "calib" steps of bench/estimate_accuracy.py (docs/benchmarks.md, "Step time
// estimates"). On other GPUs it is the same fraction of their TDP: an estimate.
inline constexpr double kPowerAtNoTensorWork = 0.575;
inline constexpr double kPowerPerTensorShare = 0.436;

// GEMMs of fp8 operands (a step of train.precision = "fp8", traced with its choice) are priced
// by `fp8`, every other op as at gemm's precision.
StepEstimate estimate_step(const Workload& w, const GemmModel& gemm,
                           const GemmModel* fp8 = nullptr);

// The share of the tensor-core peak hwt's attention kernels reach at this head size and
// precision, forward or backward, on a GPU of this architecture; 0 where they fall back to the
// generic kernels.
double attention_peak_fraction(GpuArch arch, Precision p, int64_t head_dim, bool backward);

}  // namespace hwt
