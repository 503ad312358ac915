// Workloads and the design space shared by the simulator benchmarks.
#pragma once

#include <map>

#include "accel/design_space.h"
#include "accel/sim_workload.h"
#include "core/paths.h"
#include "workload/trace_step.h"

namespace hwt::accel::bench {

inline DesignSpace acceltran_space() {
  return load_design_space(require_shipped_file("hardware/accel/spaces/acceltran.toml"),
                           default_hardware_library());
}

// One traced workload per batch choice of the space, of a config in configs/ ("bert_base").
inline std::map<int64_t, SimWorkload> workloads(const DesignSpace& s, TraceMode mode,
                                                const std::string& config,
                                                const Sparsity& sparsity = {}) {
  const RunConfig c = load_run_config(config, {});
  std::map<int64_t, SimWorkload> out;
  for (int64_t b : s.batch)
    out.emplace(b, build_sim_workload(trace_step(step_spec(c, b, 0, mode)), mode, sparsity));
  return out;
}

}  // namespace hwt::accel::bench
