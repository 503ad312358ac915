// The hardware half of a pair's objectives: a model shape's training step on an accelerator
// design, simulated with the fast model (accel/), per sequence, with the sparsity the shape's own
// pruned run measured where there is one and AccelTran's constants otherwise. Workloads are
// traced once per shape, sparsity and batch and kept.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "accel/design_space.h"
#include "accel/sim_workload.h"
#include "codesign/model_space.h"
#include "train/sparsity_log.h"

namespace hwt::codesign {

// Per sequence of the design's batch: one training step's latency, its dynamic and leakage
// energy, and the chip's area.
struct HwMetrics {
  double latency_s = 0, dynamic_j = 0, leakage_j = 0, area_mm2 = 0;
  double energy_j() const { return dynamic_j + leakage_j; }
};

class HardwareEvaluator {
 public:
  // `base` is the run config the shapes are applied to; its vocabulary should be the trained
  // one (model.vocab_size), or step_spec's stand-in is traced.
  HardwareEvaluator(RunConfig base, accel::DesignSpace space, const accel::HardwareLibrary& lib);

  const accel::DesignSpace& space() const { return space_; }
  // Design `index` of the space, at the batch the space's index picks.
  HwMetrics evaluate(const ModelShape& s, uint64_t index);
  // A design outside the space (the baseline's file) at `batch`.
  HwMetrics evaluate(const ModelShape& s, const accel::AccelConfig& design, int64_t batch);

  // From now on `s` is simulated with what its run measured (accel::Sparsity::measured_in)
  // instead of the constants.
  void use_measured(const ModelShape& s, const RunSparsity& run);
  // Where `s`'s sparsity comes from: its run's sparsity.json, or AccelTran's constants.
  std::string sparsity_source(const ModelShape& s) const;

 private:
  const accel::SimWorkload& workload(const ModelShape& s, int64_t batch);

  RunConfig base_;
  accel::DesignSpace space_;
  const accel::HardwareLibrary& lib_;
  std::map<std::string, accel::Sparsity> measured_;  // by shape key
  std::map<std::pair<std::string, int64_t>, accel::SimWorkload> workloads_;
};

}  // namespace hwt::codesign
