#include "accel/simulator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <numeric>

#include "accel/fast_model.h"
#include "accel/sparsity_report.h"
#include "accel/tile_sim.h"
#include "core/error.h"
#include "core/integer_math.h"

namespace hwt::accel {
namespace {

std::string_view fidelity_name(Fidelity f) {
  return f == Fidelity::Fast ? "fast" : "detailed";
}

nlohmann::json activity_json(const Activity& a) {
  return {{"cycles", a.cycles},
          {"compute_cycles", a.compute_cycles},
          {"memory_cycles", a.memory_cycles},
          {"lane_cycles", a.lane_cycles},
          {"softmax_cycles", a.softmax_cycles},
          {"layernorm_cycles", a.layernorm_cycles},
          {"tiles", a.dispatches},
          {"main_memory_bytes", a.main_bytes},
          {"buffer_port_bytes", a.port_bytes},
          {"activation_buffer_bytes", a.act_bytes},
          {"weight_buffer_bytes", a.weight_bytes},
          {"mask_buffer_bytes", a.mask_bytes}};
}

nlohmann::json design_json(const AccelConfig& c) {
  nlohmann::json j = {{"name", c.name},
                      {"clock_mhz", c.clock_mhz},
                      {"technology_nm", c.technology_nm},
                      {"word_bits", c.word_bits},
                      {"pes", c.pes},
                      {"mac_lanes_per_pe", c.lanes_per_pe},
                      {"macs_per_lane", c.macs_per_lane},
                      {"softmax_units_per_pe", c.softmax_per_pe},
                      {"layernorm_units_per_pe", c.layernorm_per_pe},
                      {"tile", {c.tile_b, c.tile_x, c.tile_y}},
                      {"dataflow", loop_order_name(c.dataflow)},
                      {"double_buffering", c.double_buffering},
                      {"power_gating", c.power_gating},
                      {"buffers_mb",
                       {{"activation", c.activation_buffer_mb},
                        {"weight", c.weight_buffer_mb},
                        {"mask", c.mask_buffer_mb}}},
                      {"buffer_bandwidth_gbps", c.buffer_bandwidth_gbps},
                      {"memory",
                       {{"type", c.memory.type},
                        {"banks", c.memory.banks},
                        {"ranks", c.memory.ranks},
                        {"channels", c.memory.channels}}},
                      {"skip_zeros", c.skip_zeros},
                      {"compress", c.compress}};
  if (!c.library.empty()) j["library"] = c.library;
  if (c.fpga)
    j["fpga"] = {{"dsp_slices", c.fpga->dsp_slices},
                 {"dsps_per_mac", c.fpga->dsps_per_mac},
                 {"bram_mb", c.fpga->bram_mb},
                 {"uram_mb", c.fpga->uram_mb}};
  return j;
}

std::string si(double v, const char* unit) {
  const char* prefix[] = {"p", "n", "u", "m", "", "k", "M", "G", "T"};
  int i = 4;
  while (std::abs(v) >= 1000 && i < 8) v /= 1000, ++i;
  while (v != 0 && std::abs(v) < 1 && i > 0) v *= 1000, --i;
  return fmt::format("{:.3g} {}{}", v, prefix[i], unit);
}

}  // namespace

SimResult simulate(const SimWorkload& w, const AccelConfig& c, const HardwareLibrary& lib,
                   Fidelity f, const std::function<void(size_t, size_t)>& progress) {
  const DesignParams p = make_design_params(c, lib);
  const std::vector<Activity> classes =
      f == Fidelity::Fast ? fast_classes(w, p) : detailed_classes(w, p, progress);
  SimResult r;
  r.design = c;
  r.fidelity = f;
  r.batch = w.batch;
  r.seq = w.seq;
  r.parameters = w.parameters;
  r.mode = w.mode;
  r.sparsity = w.sparsity;
  for (const SimOp& op : w.ops) {
    OpResult o{op.label, op.phase, {}, 0};
    for (size_t i = op.first_stage; i < op.first_stage + op.stage_count; ++i)
      o.activity += classes[w.class_of[i]];
    o.energy_j = price(o.activity, p).energy_j();
    r.total += o.activity;
    r.ops.push_back(std::move(o));
  }
  r.costs = price(r.total, p);
  r.latency_s = r.total.cycles / p.clock_hz;
  return r;
}

EpochCost epoch_cost(const SimResult& r, int64_t examples) {
  HWT_CHECK(examples > 0 && r.batch > 0, "an epoch needs examples and a batch");
  const int64_t steps = ceil_div(examples, r.batch);
  const auto n = static_cast<double>(steps);
  return {examples, steps, n * r.latency_s, n * r.costs.energy_j()};
}

void to_json(nlohmann::json& j, const EpochCost& e) {
  j = {{"examples", e.examples},
       {"steps", e.steps},
       {"latency_s", e.latency_s},
       {"energy_j", e.energy_j}};
}

void to_json(nlohmann::json& j, const SimResult& r) {
  nlohmann::json modules = nlohmann::json::array();
  for (const ModuleCost& m : r.costs.modules)
    modules.push_back({{"module", m.name},
                       {"dynamic_j", m.dynamic_j},
                       {"leakage_j", m.leakage_j},
                       {"area_mm2", m.area_mm2},
                       {"utilisation", m.utilisation}});
  nlohmann::json ops = nlohmann::json::array();
  for (const OpResult& o : r.ops) {
    nlohmann::json oj = activity_json(o.activity);
    oj["op"] = o.label;
    oj["phase"] = phase_name(o.phase);
    oj["energy_j"] = o.energy_j;
    ops.push_back(std::move(oj));
  }
  j = {{"design", design_json(r.design)},
       {"fidelity", fidelity_name(r.fidelity)},
       {"workload",
        {{"mode", r.mode == TraceMode::Train ? "train" : "infer"},
         {"batch", r.batch},
         {"seq", r.seq},
         {"parameters", r.parameters},
         {"sparsity", sparsity_json(r.sparsity, r.mode)}}},
       {"cycles", r.total.cycles},
       {"latency_s", r.latency_s},
       {"dynamic_energy_j", r.costs.dynamic_j},
       {"leakage_energy_j", r.costs.leakage_j},
       {"energy_j", r.costs.energy_j()},
       {"area_mm2", r.costs.area_mm2},
       {"modules", modules},
       {"totals", activity_json(r.total)},
       {"ops", ops}};
}

std::string format_result(const SimResult& r, size_t top_ops) {
  std::string s;
  const AccelConfig& c = r.design;
  s += fmt::format("design {}: {} PEs x {} lanes x {} MACs, tile {}x{}x{}, dataflow {}, {}\n",
                   c.name, c.pes, c.lanes_per_pe, c.macs_per_lane, c.tile_b, c.tile_x, c.tile_y,
                   loop_order_name(c.dataflow), c.memory.type);
  if (c.fpga)
    s += fmt::format(
        "fpga: {} of {} DSP slices ({} per MAC), BRAM {} of {} MiB, URAM {} of {} MiB\n",
        c.lanes() * c.macs_per_lane * c.fpga->dsps_per_mac, c.fpga->dsp_slices,
        c.fpga->dsps_per_mac, c.weight_buffer_mb + c.mask_buffer_mb, c.fpga->bram_mb,
        c.activation_buffer_mb, c.fpga->uram_mb);
  s += fmt::format("workload: {} batch {} x seq {}; {} model\n",
                   r.mode == TraceMode::Train ? "training step" : "inference", r.batch, r.seq,
                   fidelity_name(r.fidelity));
  s += format_sparsity(r.sparsity, r.mode) + "\n";
  s += fmt::format("latency   {:>14}  ({:.4g} cycles)\n", si(r.latency_s, "s"), r.total.cycles);
  s += fmt::format("energy    {:>14}  (dynamic {}, leakage {})\n", si(r.costs.energy_j(), "J"),
                   si(r.costs.dynamic_j, "J"), si(r.costs.leakage_j, "J"));
  s += fmt::format("area      {:>11.4g} mm2\n", r.costs.area_mm2);
  s += fmt::format("traffic   main memory {}, buffer ports {}\n\n", si(r.total.main_bytes, "B"),
                   si(r.total.port_bytes, "B"));
  s += fmt::format("{:<20} {:>12} {:>12} {:>12} {:>8}\n", "module", "dynamic", "leakage",
                   "area mm2", "util");
  for (const ModuleCost& m : r.costs.modules)
    s += fmt::format("{:<20} {:>12} {:>12} {:>12.4g} {:>7.1f}%\n", m.name, si(m.dynamic_j, "J"),
                     si(m.leakage_j, "J"), m.area_mm2, 100 * m.utilisation);
  std::vector<size_t> order(r.ops.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return r.ops[a].activity.cycles > r.ops[b].activity.cycles;
  });
  s += fmt::format("\n{:<44} {:<9} {:>11} {:>8} {:>11} {:>11}\n", "op (costliest first)", "phase",
                   "cycles", "share", "memory", "energy");
  for (size_t i = 0; i < std::min(top_ops, order.size()); ++i) {
    const OpResult& o = r.ops[order[i]];
    s += fmt::format("{:<44.44} {:<9} {:>11.4g} {:>7.1f}% {:>11} {:>11}\n", o.label,
                     phase_name(o.phase), o.activity.cycles,
                     100 * o.activity.cycles / r.total.cycles, si(o.activity.main_bytes, "B"),
                     si(o.energy_j, "J"));
  }
  if (order.size() > top_ops)
    s += fmt::format("... {} more ops (--json lists every op)\n", order.size() - top_ops);
  return s;
}

}  // namespace hwt::accel
