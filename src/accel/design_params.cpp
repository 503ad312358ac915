#include "accel/design_params.h"

#include <fmt/format.h>

#include <cmath>

namespace hwt::accel {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kUm2PerMm2 = 1e6;

// Energy per access grows with sqrt(size) (CACTI trend, as in AccelTran), per byte here.
double buffer_energy_per_byte(const BufferSpec& b, double mb, double dyn) {
  return dyn * b.access_energy_nj * std::sqrt(mb / b.reference_mb) / b.access_bytes;
}

}  // namespace

DesignParams make_design_params(const AccelConfig& c, const HardwareLibrary& lib) {
  DesignParams p;
  p.pes = c.pes;
  p.lanes_per_pe = c.lanes_per_pe;
  p.lanes = c.lanes();
  p.macs = c.macs_per_lane;
  p.softmax_units = c.pes * c.softmax_per_pe;
  p.layernorm_units = c.pes * c.layernorm_per_pe;
  const ModuleSpec& lane = lib.module(fmt::format("mac_lane_{}", c.macs_per_lane));
  const ModuleSpec& sm = lib.module("softmax");
  const ModuleSpec& ln = lib.module("layernorm");
  const ModuleSpec& pre = lib.module("pre_sparsity");
  const ModuleSpec& post = lib.module("post_sparsity");
  const ModuleSpec& df = lib.module("dataflow");
  const ModuleSpec& dma = lib.module("dma");
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
  const double dyn = lib.dynamic_factor(c.technology_nm);
  const double leak = lib.leakage_factor(c.technology_nm);
  const double area = lib.area_factor(c.technology_nm);
  const double per_cycle = dyn * 1e-3 / (lib.clock_mhz * 1e6) * 1e9;  // mW -> nJ per cycle
  p.e_lane_cycle = lane.dynamic_mw * per_cycle;
  p.e_sparsity_cycle =
      ((c.skip_zeros ? pre.dynamic_mw : 0) + (c.compress ? post.dynamic_mw : 0)) * per_cycle;
  p.e_softmax_cycle = sm.dynamic_mw * per_cycle;
  p.e_layernorm_cycle = ln.dynamic_mw * per_cycle;
  p.e_dispatch = (df.dynamic_mw + dma.dynamic_mw) * per_cycle;
  p.e_act_byte = buffer_energy_per_byte(lib.buffer("activation"), c.activation_buffer_mb, dyn);
  p.e_weight_byte = buffer_energy_per_byte(lib.buffer("weight"), c.weight_buffer_mb, dyn);
  p.e_mask_byte = buffer_energy_per_byte(lib.buffer("mask"), c.mask_buffer_mb, dyn);
  p.e_main_byte = mem.energy_per_byte_nj;  // off chip: not scaled with the logic node

  p.leak_lane = lane.leakage_mw * leak;
  p.leak_sparsity =
      ((c.skip_zeros ? pre.leakage_mw : 0) + (c.compress ? post.leakage_mw : 0)) * leak;
  p.leak_softmax = sm.leakage_mw * leak;
  p.leak_layernorm = ln.leakage_mw * leak;
  p.leak_control_per_pe = (df.leakage_mw + dma.leakage_mw) * leak;
  p.leak_act_buffer = lib.buffer("activation").leakage_mw_per_mb * c.activation_buffer_mb * leak;
  p.leak_weight_buffer = lib.buffer("weight").leakage_mw_per_mb * c.weight_buffer_mb * leak;
  p.leak_mask_buffer = lib.buffer("mask").leakage_mw_per_mb * c.mask_buffer_mb * leak;

  const double lanes = static_cast<double>(p.lanes), pes = static_cast<double>(p.pes);
  p.area_lanes = lanes * lane.area_um2 * area / kUm2PerMm2;
  p.area_sparsity = lanes * ((c.skip_zeros ? pre.area_um2 : 0) + (c.compress ? post.area_um2 : 0)) *
                    area / kUm2PerMm2;
  p.area_softmax = static_cast<double>(p.softmax_units) * sm.area_um2 * area / kUm2PerMm2;
  p.area_layernorm = static_cast<double>(p.layernorm_units) * ln.area_um2 * area / kUm2PerMm2;
  p.area_control = pes * (df.area_um2 + dma.area_um2) * area / kUm2PerMm2;
  p.area_act_buffer = lib.buffer("activation").area_mm2_per_mb * c.activation_buffer_mb * area;
  p.area_weight_buffer = lib.buffer("weight").area_mm2_per_mb * c.weight_buffer_mb * area;
  p.area_mask_buffer = lib.buffer("mask").area_mm2_per_mb * c.mask_buffer_mb * area;
  return p;
}

}  // namespace hwt::accel
