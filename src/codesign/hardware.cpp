#include "codesign/hardware.h"

#include "accel/sweep.h"

namespace hwt::codesign {

HardwareEvaluator::HardwareEvaluator(RunConfig base, accel::DesignSpace space,
                                     const accel::HardwareLibrary& lib)
    : base_(std::move(base)), space_(std::move(space)), lib_(lib) {}

const accel::SimWorkload& HardwareEvaluator::workload(const ModelShape& s, int64_t batch) {
  const auto key = std::pair(s.key(), batch);
  auto it = workloads_.find(key);
  if (it == workloads_.end()) {
    const auto m = measured_.find(s.key());
    it = workloads_
             .emplace(key, accel::trace_sim_workload(
                               s.apply(base_), batch, 0, TraceMode::Train,
                               m == measured_.end() ? accel::Sparsity{} : m->second))
             .first;
  }
  return it->second;
}

void HardwareEvaluator::use_measured(const ModelShape& s, const RunSparsity& run) {
  measured_.insert_or_assign(s.key(), accel::Sparsity::measured_in(run));
  std::erase_if(workloads_, [&](const auto& w) { return w.first.first == s.key(); });
}

std::string HardwareEvaluator::sparsity_source(const ModelShape& s) const {
  const auto m = measured_.find(s.key());
  return m == measured_.end() ? "AccelTran's constants" : "measured in " + m->second.measured_file;
}

HwMetrics HardwareEvaluator::evaluate(const ModelShape& s, const accel::AccelConfig& design,
                                      int64_t batch) {
  const accel::SweepPoint p = accel::evaluate_design(design, batch, workload(s, batch), lib_);
  const auto b = static_cast<double>(batch);
  return {p.latency_per_seq(), p.dynamic_j / b, p.leakage_j / b, p.area_mm2};
}

HwMetrics HardwareEvaluator::evaluate(const ModelShape& s, uint64_t index) {
  int64_t batch = 0;
  const accel::AccelConfig design = space_.design(index, &batch);
  return evaluate(s, design, batch);
}

}  // namespace hwt::codesign
