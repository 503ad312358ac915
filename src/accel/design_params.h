// A design reduced to the numbers the models use: unit counts, tile sizes, bandwidths in bytes
// per cycle, buffer capacities in bytes, energy per event and leakage per unit (technology
// scaling applied). Derived once per design; the fast model's inner loop reads only this.
#pragma once

#include <cstdint>

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
};

DesignParams make_design_params(const AccelConfig& c, const HardwareLibrary& lib);

}  // namespace hwt::accel
