// What machine a run ran on, for run.json and benchmark records.
#pragma once

#include <nlohmann/json_fwd.hpp>

namespace hwt {

// CPU model, logical cores, memory, OS and host name.
nlohmann::json host_info();

}  // namespace hwt
