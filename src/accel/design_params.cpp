#include "accel/design_params.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstring>
#include <string_view>

#include "core/error.h"

namespace hwt::accel {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kUm2PerMm2 = 1e6;
constexpr const char* kLanePrefix = "mac_lane_";

// Energy per access grows with sqrt(size) (CACTI trend, as in AccelTran), per byte here.
double buffer_energy_per_byte(const BufferSpec& b, double mb, double dyn) {
  return dyn * b.access_energy_nj * std::sqrt(mb / b.reference_mb) / b.access_bytes;
}

}  // namespace

const ModuleSpec& NodeLibrary::lane(int64_t macs) const {
  for (const auto& [n, spec] : lanes)
    if (n == macs) return *spec;
  return lib->module(fmt::format("{}{}", kLanePrefix, macs));  // throws, naming the library
}

NodeLibrary node_library(const HardwareLibrary& lib, int technology_nm) {
  NodeLibrary node;
  node.lib = &lib;
  node.technology_nm = technology_nm;
  node.dynamic = lib.dynamic_factor(technology_nm);
  node.leakage = lib.leakage_factor(technology_nm);
  node.area = lib.area_factor(technology_nm);
  node.nj_per_mw_cycle = node.dynamic * 1e-3 / (lib.clock_mhz * 1e6) * 1e9;
  node.softmax = &lib.module("softmax");
  node.layernorm = &lib.module("layernorm");
  node.pre_sparsity = &lib.module("pre_sparsity");
  node.post_sparsity = &lib.module("post_sparsity");
  node.dataflow = &lib.module("dataflow");
  node.dma = &lib.module("dma");
  node.act_buffer = &lib.buffer("activation");
  node.weight_buffer = &lib.buffer("weight");
  node.mask_buffer = &lib.buffer("mask");
  for (const auto& [name, spec] : lib.modules) {
    if (name.rfind(kLanePrefix, 0) != 0) continue;
    const std::string_view digits = std::string_view(name).substr(std::strlen(kLanePrefix));
    int64_t macs = 0;
    const auto [end, err] = std::from_chars(digits.data(), digits.data() + digits.size(), macs);
    if (err == std::errc() && end == digits.data() + digits.size())
      node.lanes.emplace_back(macs, &spec);
  }
  return node;
}

DesignParams make_design_params(const AccelConfig& c, const HardwareLibrary& lib) {
  return make_design_params(c, node_library(lib, c.technology_nm));
}

DesignParams make_design_params(const AccelConfig& c, const NodeLibrary& node) {
  HWT_CHECK(c.technology_nm == node.technology_nm, "design at {} nm priced with a {} nm library",
            c.technology_nm, node.technology_nm);
  const HardwareLibrary& lib = *node.lib;
  DesignParams p;
  p.pes = c.pes;
  p.lanes_per_pe = c.lanes_per_pe;
  p.lanes = c.lanes();
  p.macs = c.macs_per_lane;
  p.softmax_units = c.pes * c.softmax_per_pe;
  p.layernorm_units = c.pes * c.layernorm_per_pe;
  const ModuleSpec& lane = node.lane(c.macs_per_lane);
  const ModuleSpec& sm = *node.softmax;
  const ModuleSpec& ln = *node.layernorm;
  const ModuleSpec& pre = *node.pre_sparsity;
  const ModuleSpec& post = *node.post_sparsity;
  const ModuleSpec& df = *node.dataflow;
  const ModuleSpec& dma = *node.dma;
  const BufferSpec& act_buffer = *node.act_buffer;
  const BufferSpec& weight_buffer = *node.weight_buffer;
  const BufferSpec& mask_buffer = *node.mask_buffer;
  p.softmax_width = sm.width;
  p.layernorm_width = ln.width;
  p.tile_b = c.tile_b;
  p.tile_x = c.tile_x;
  p.tile_y = c.tile_y;
  p.order = c.dataflow;
  p.double_buffering = c.double_buffering;
  p.skip_zeros = c.skip_zeros;
  p.compress = c.compress;
  p.power_gating = c.power_gating;

  p.clock_hz = c.clock_mhz * 1e6;
  p.word_bytes = c.word_bits / 8.0;
  const ResolvedMemory mem = resolve_memory(c, lib);
  p.main_bpc = mem.bandwidth_gbps * 1e9 / p.clock_hz;
  p.port_bpc = c.buffer_bandwidth_gbps * 1e9 / p.clock_hz;
  p.act_capacity = c.activation_buffer_mb * kMiB;
  p.weight_capacity = c.weight_buffer_mb * kMiB;

  // Energy per busy cycle is P / f at the library's clock: it does not change with the clock.
  const double dyn = node.dynamic, leak = node.leakage, area = node.area;
  const double per_cycle = node.nj_per_mw_cycle;
  p.e_lane_cycle = lane.dynamic_mw * per_cycle;
  p.e_sparsity_cycle =
      ((c.skip_zeros ? pre.dynamic_mw : 0) + (c.compress ? post.dynamic_mw : 0)) * per_cycle;
  p.e_softmax_cycle = sm.dynamic_mw * per_cycle;
  p.e_layernorm_cycle = ln.dynamic_mw * per_cycle;
  p.e_dispatch = (df.dynamic_mw + dma.dynamic_mw) * per_cycle;
  p.e_act_byte = buffer_energy_per_byte(act_buffer, c.activation_buffer_mb, dyn);
  p.e_weight_byte = buffer_energy_per_byte(weight_buffer, c.weight_buffer_mb, dyn);
  p.e_mask_byte = buffer_energy_per_byte(mask_buffer, c.mask_buffer_mb, dyn);
  p.e_main_byte = mem.energy_per_byte_nj;  // off chip: not scaled with the logic node

  p.leak_lane = lane.leakage_mw * leak;
  p.leak_sparsity =
      ((c.skip_zeros ? pre.leakage_mw : 0) + (c.compress ? post.leakage_mw : 0)) * leak;
  p.leak_softmax = sm.leakage_mw * leak;
  p.leak_layernorm = ln.leakage_mw * leak;
  p.leak_control_per_pe = (df.leakage_mw + dma.leakage_mw) * leak;
  p.leak_act_buffer = act_buffer.leakage_mw_per_mb * c.activation_buffer_mb * leak;
  p.leak_weight_buffer = weight_buffer.leakage_mw_per_mb * c.weight_buffer_mb * leak;
  p.leak_mask_buffer = mask_buffer.leakage_mw_per_mb * c.mask_buffer_mb * leak;

  const double lanes = static_cast<double>(p.lanes), pes = static_cast<double>(p.pes);
  p.area_lanes = lanes * lane.area_um2 * area / kUm2PerMm2;
  p.area_sparsity = lanes * ((c.skip_zeros ? pre.area_um2 : 0) + (c.compress ? post.area_um2 : 0)) *
                    area / kUm2PerMm2;
  p.area_softmax = static_cast<double>(p.softmax_units) * sm.area_um2 * area / kUm2PerMm2;
  p.area_layernorm = static_cast<double>(p.layernorm_units) * ln.area_um2 * area / kUm2PerMm2;
  p.area_control = pes * (df.area_um2 + dma.area_um2) * area / kUm2PerMm2;
  p.area_act_buffer = act_buffer.area_mm2_per_mb * c.activation_buffer_mb * area;
  p.area_weight_buffer = weight_buffer.area_mm2_per_mb * c.weight_buffer_mb * area;
  p.area_mask_buffer = mask_buffer.area_mm2_per_mb * c.mask_buffer_mb * area;
  return p;
}

}  // namespace hwt::accel
