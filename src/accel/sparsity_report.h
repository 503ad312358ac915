// Where the simulator's sparsities came from, for hwt sim's JSON and text reports: each operand
// role's constant with its source and, with a run's measurements, each point's fraction and
// whether it applies to the simulated mode.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <string>

#include "accel/sim_workload.h"

namespace hwt::accel {

nlohmann::json sparsity_json(const Sparsity& s, TraceMode mode);
// Lines "sparsity  ...", each ending in a newline.
std::string format_sparsity(const Sparsity& s, TraceMode mode);

}  // namespace hwt::accel
