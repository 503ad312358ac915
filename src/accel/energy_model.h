// Prices an Activity on a design: dynamic energy per event, leakage over time (compute units
// power-gated when idle if the design says so; control and buffers always on), area and
// utilisation per module. The total is by construction the sum over modules.
#pragma once

#include <array>
#include <string_view>

#include "accel/activity.h"
#include "accel/design_params.h"

namespace hwt::accel {

struct ModuleCost {
  std::string_view name;
  double dynamic_j = 0, leakage_j = 0, area_mm2 = 0;
  double utilisation = 0;  // busy fraction (compute), bandwidth fraction (buffers, memory)
};

constexpr size_t kModuleCount = 9;

struct Costs {
  std::array<ModuleCost, kModuleCount> modules{};
  double dynamic_j = 0, leakage_j = 0, area_mm2 = 0;
  double energy_j() const { return dynamic_j + leakage_j; }
};

Costs price(const Activity& a, const DesignParams& p);

}  // namespace hwt::accel
