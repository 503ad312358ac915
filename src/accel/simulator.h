// One workload on one design: per-op activity from either fidelity, priced into latency,
// energy (dynamic and leakage, per module), area and utilisation.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <functional>
#include <string>
#include <vector>

#include "accel/accel_config.h"
#include "accel/energy_model.h"
#include "accel/sim_workload.h"

namespace hwt::accel {

enum class Fidelity : uint8_t { Fast, Detailed };

struct OpResult {
  std::string label;
  Phase phase = Phase::Other;
  Activity activity;
  double energy_j = 0;
};

struct SimResult {
  AccelConfig design;
  Fidelity fidelity = Fidelity::Fast;
  int64_t batch = 0, seq = 0, parameters = 0;
  TraceMode mode = TraceMode::Train;
  Sparsity sparsity;
  Activity total;
  Costs costs;
  double latency_s = 0;
  std::vector<OpResult> ops;
};

SimResult simulate(const SimWorkload& w, const AccelConfig& c, const HardwareLibrary& lib,
                   Fidelity f, const std::function<void(size_t, size_t)>& progress = nullptr);

// An epoch of `examples` at the simulated batch: ceil(examples / batch) steps like this one.
struct EpochCost {
  int64_t examples = 0, steps = 0;
  double latency_s = 0, energy_j = 0;
};
EpochCost epoch_cost(const SimResult& r, int64_t examples);

void to_json(nlohmann::json& j, const SimResult& r);
void to_json(nlohmann::json& j, const EpochCost& e);
// A human-readable summary: totals, modules, and the `top_ops` costliest ops.
std::string format_result(const SimResult& r, size_t top_ops = 12);

}  // namespace hwt::accel
