#include "accel/energy_model.h"

namespace hwt::accel {
namespace {

constexpr double kNj = 1e-9;
constexpr double kMw = 1e-3;

double ratio(double num, double den) {
  return den > 0 ? num / den : 0;
}

}  // namespace

Costs price(const Activity& a, const DesignParams& p) {
  const double seconds = a.cycles / p.clock_hz;
  // Leakage of a compute unit: while busy when power-gated, else for the whole run.
  auto gated = [&](double busy_cycles, double units, double leak_mw) {
    const double on_s = p.power_gating ? busy_cycles / p.clock_hz : units * seconds;
    return leak_mw * kMw * on_s;
  };
  const double lanes = static_cast<double>(p.lanes);
  const double sm_units = static_cast<double>(p.softmax_units);
  const double ln_units = static_cast<double>(p.layernorm_units);
  const double pes = static_cast<double>(p.pes);
  const double port_capacity = pes * p.port_bpc * a.cycles;

  Costs c;
  c.modules[0] = {"mac_lanes", a.lane_cycles * p.e_lane_cycle * kNj,
                  gated(a.lane_cycles, lanes, p.leak_lane), p.area_lanes,
                  ratio(a.lane_cycles, lanes * a.cycles)};
  c.modules[1] = {"sparsity_modules", a.lane_cycles * p.e_sparsity_cycle * kNj,
                  gated(a.lane_cycles, lanes, p.leak_sparsity), p.area_sparsity,
                  p.area_sparsity > 0 ? ratio(a.lane_cycles, lanes * a.cycles) : 0};
  c.modules[2] = {"softmax_units", a.softmax_cycles * p.e_softmax_cycle * kNj,
                  gated(a.softmax_cycles, sm_units, p.leak_softmax), p.area_softmax,
                  ratio(a.softmax_cycles, sm_units * a.cycles)};
  c.modules[3] = {"layernorm_units", a.layernorm_cycles * p.e_layernorm_cycle * kNj,
                  gated(a.layernorm_cycles, ln_units, p.leak_layernorm), p.area_layernorm,
                  ratio(a.layernorm_cycles, ln_units * a.cycles)};
  c.modules[4] = {"pe_control", a.dispatches * p.e_dispatch * kNj,
                  pes * p.leak_control_per_pe * kMw * seconds, p.area_control,
                  ratio(a.dispatches, pes * a.cycles)};
  c.modules[5] = {"activation_buffer", a.act_bytes * p.e_act_byte * kNj,
                  p.leak_act_buffer * kMw * seconds, p.area_act_buffer,
                  ratio(a.act_bytes, port_capacity)};
  c.modules[6] = {"weight_buffer", a.weight_bytes * p.e_weight_byte * kNj,
                  p.leak_weight_buffer * kMw * seconds, p.area_weight_buffer,
                  ratio(a.weight_bytes, port_capacity)};
  c.modules[7] = {"mask_buffer", a.mask_bytes * p.e_mask_byte * kNj,
                  p.leak_mask_buffer * kMw * seconds, p.area_mask_buffer,
                  ratio(a.mask_bytes, port_capacity)};
  c.modules[8] = {"main_memory", a.main_bytes * p.e_main_byte * kNj, 0, 0,
                  ratio(a.main_bytes, p.main_bpc * a.cycles)};
  for (const ModuleCost& m : c.modules) {
    c.dynamic_j += m.dynamic_j;
    c.leakage_j += m.leakage_j;
    c.area_mm2 += m.area_mm2;
  }
  return c;
}

}  // namespace hwt::accel
