// A design reduced to the numbers the models use: unit counts, tile sizes, bandwidths in bytes
// per cycle, buffer capacities in bytes, energy per event and leakage per unit (technology
// scaling applied). Derived once per design; the fast model's inner loop reads only this.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "accel/accel_config.h"
#include "accel/hardware_library.h"

namespace hwt::accel {

struct DesignParams {
  int64_t pes = 0, lanes_per_pe = 0, lanes = 0, macs = 0;
  int64_t softmax_units = 0, layernorm_units = 0;
  int64_t softmax_width = 0, layernorm_width = 0;
  int64_t tile_b = 1, tile_x = 1, tile_y = 1;
  LoopOrder order{};
  bool double_buffering = true, skip_zeros = true, compress = true, power_gating = true;

  double clock_hz = 0;
  double word_bytes = 0;                         // word_bits / 8
  double main_bpc = 0;                           // main-memory bytes per cycle
  double port_bpc = 0;                           // bytes per cycle of one PE's buffer port
  double act_capacity = 0, weight_capacity = 0;  // buffer bytes

  // Dynamic energy per event, nJ.
  double e_lane_cycle = 0, e_sparsity_cycle = 0, e_softmax_cycle = 0, e_layernorm_cycle = 0;
  double e_dispatch = 0;
  double e_act_byte = 0, e_weight_byte = 0, e_mask_byte = 0, e_main_byte = 0;

  // Leakage power, mW: per busy unit (power-gated) or per instance.
  double leak_lane = 0, leak_sparsity = 0, leak_softmax = 0, leak_layernorm = 0;
  double leak_control_per_pe = 0;
  double leak_act_buffer = 0, leak_weight_buffer = 0, leak_mask_buffer = 0;

  // Area, mm^2.
  double area_lanes = 0, area_sparsity = 0, area_softmax = 0, area_layernorm = 0;
  double area_control = 0, area_act_buffer = 0, area_weight_buffer = 0, area_mask_buffer = 0;

  bool operator==(const DesignParams&) const = default;
};

// The library's entries at one technology node: every part a design is priced with, found by
// name, and the node's scaling factors, computed once. A sweep derives millions of designs of
// one node from it without touching the library's maps.
struct NodeLibrary {
  const HardwareLibrary* lib = nullptr;
  int technology_nm = 0;
  double dynamic = 0, leakage = 0, area = 0;  // the node's scaling factors
  double nj_per_mw_cycle = 0;                 // mW -> nJ per cycle at the library's clock
  const ModuleSpec *softmax = nullptr, *layernorm = nullptr, *pre_sparsity = nullptr,
                   *post_sparsity = nullptr, *dataflow = nullptr, *dma = nullptr;
  const BufferSpec *act_buffer = nullptr, *weight_buffer = nullptr, *mask_buffer = nullptr;
  std::vector<std::pair<int64_t, const ModuleSpec*>> lanes;  // `mac_lane_<n>` by n

  // The `mac_lane_<macs>` module; InputError naming the library if it has none.
  const ModuleSpec& lane(int64_t macs) const;
};

NodeLibrary node_library(const HardwareLibrary& lib, int technology_nm);

DesignParams make_design_params(const AccelConfig& c, const NodeLibrary& node);
DesignParams make_design_params(const AccelConfig& c, const HardwareLibrary& lib);

}  // namespace hwt::accel
