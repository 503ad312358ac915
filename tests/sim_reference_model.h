// A frozen copy of the fast model and of the design-parameter derivation as they were before
// the per-design constants were hoisted (issue 34, main at b88f2a5). The restructured model must
// reproduce it bit for bit, since `hwt sim` prints its results to the last digit: see
// sim_fast_equivalence_test.cpp. Test-only; not built into the library.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "accel/activity.h"
#include "accel/design_params.h"
#include "accel/sim_workload.h"
#include "core/integer_math.h"

namespace hwt::accel::reference {

struct ElementCost {
  double data = 0, mask = 0;
  double total() const { return data + mask; }
};

enum Operand3 : int { kA = 0, kB = 1, kC = 2 };

struct GemmMap {
  std::array<int64_t, 4> dim{};    // per Loop: batch, m, n, k
  std::array<int64_t, 4> ext{};    // tile extent per Loop, clipped to the dimension
  std::array<int64_t, 4> trips{};  // tiles per Loop
  int64_t tiles = 0;
  std::array<double, 3> elems{};       // A, B, C sizes in elements
  std::array<ElementCost, 3> cost{};   // A, B: stored operands; C: the final (pruned) result
  double partial_bytes = 0;            // per C element while partial sums accumulate (dense)
  std::array<double, 3> tile_bytes{};  // buffer footprint of one full tile (C as partials)
  std::array<double, 3> share{};       // buffer bytes each operand may hold
  std::array<bool, 3> fits{};          // the whole operand fits in its share
  std::array<bool, 3> in_weight_buffer{};
  double compute_density = 1;  // fraction of MACs not skipped
  Loop inner = Loop::K;        // the loop a run walks
  int64_t runs = 0;            // tiles / trips[inner]
  int stationary = -1;         // kA, kB, kC, or -1
};

inline ElementCost element_cost(double density, const DesignParams& p) {
  if (!p.compress) return {p.word_bytes, 0};
  return {p.word_bytes * density, 1.0 / 8};
}

inline bool indexes(int operand, Loop l) {
  switch (operand) {
    case kA:
      return l != Loop::J;
    case kB:
      return l != Loop::I;
    default:
      return l != Loop::K;
  }
}

inline int64_t tile_cycles(int64_t b, int64_t m, int64_t n, int64_t k, double density,
                           int64_t macs) {
  const double work = static_cast<double>(b * m) * static_cast<double>(n * k) * density;
  // The epsilon keeps exact products (e.g. 4096 * 0.25) from rounding up.
  return static_cast<int64_t>(std::ceil(work / static_cast<double>(macs) - 1e-9));
}

inline int64_t stage_tiles(const Stage& s, const DesignParams& p) {
  if (s.kind == StageKind::Vector) return ceil_div(s.elements, p.tile_x * p.tile_y);
  return ceil_div(s.rows, p.tile_x);
}

inline GemmMap map_gemm(const Stage& s, const DesignParams& p) {
  GemmMap g;
  g.dim = {s.batch, s.m, s.n, s.k};
  const std::array<int64_t, 4> tile = {p.tile_b, p.tile_x, p.tile_x, p.tile_y};
  g.tiles = 1;
  for (int l = 0; l < 4; ++l) {
    g.ext[l] = std::min(g.dim[l], tile[l]);
    g.trips[l] = ceil_div(g.dim[l], tile[l]);
    g.tiles *= g.trips[l];
  }
  const double b = static_cast<double>(s.batch);
  g.elems = {b * static_cast<double>(s.m * s.k), b * static_cast<double>(s.k * s.n),
             b * static_cast<double>(s.m * s.n)};
  g.cost = {reference::element_cost(s.dens_a, p), reference::element_cost(s.dens_b, p),
            reference::element_cost(s.dens_c, p)};
  g.partial_bytes = p.word_bytes;
  const double eb = static_cast<double>(g.ext[0]);
  g.tile_bytes = {eb * static_cast<double>(g.ext[1] * g.ext[3]) * g.cost[kA].data,
                  eb * static_cast<double>(g.ext[3] * g.ext[2]) * g.cost[kB].data,
                  eb * static_cast<double>(g.ext[1] * g.ext[2]) * g.partial_bytes};
  g.in_weight_buffer = {s.a == Operand::Weight, s.b == Operand::Weight, false};
  g.compute_density = p.skip_zeros ? s.dens_a * s.dens_b : 1.0;
  g.inner = p.order[3];
  for (int i = 3; i >= 0; --i)
    if (g.trips[static_cast<size_t>(p.order[static_cast<size_t>(i)])] > 1) {
      g.inner = p.order[static_cast<size_t>(i)];
      break;
    }
  g.runs = g.tiles / g.trips[static_cast<size_t>(g.inner)];
  for (int o : {kA, kB, kC})
    if (!reference::indexes(o, g.inner)) g.stationary = o;

  // Operands that fit together keep all of their data; otherwise smaller ones keep theirs
  // and the rest split what remains equally.
  const std::array<double, 3> full = {g.elems[kA] * g.cost[kA].data, g.elems[kB] * g.cost[kB].data,
                                      g.elems[kC] * g.partial_bytes};
  for (bool weight_buffer : {false, true}) {
    std::array<int, 3> ops{};
    int n = 0;
    double need = 0;
    for (int o = 0; o < 3; ++o)
      if (g.in_weight_buffer[o] == weight_buffer) ops[n++] = o, need += full[o];
    double left = weight_buffer ? p.weight_capacity : p.act_capacity;
    if (need <= left) {
      for (int i = 0; i < n; ++i) g.share[ops[i]] = full[ops[i]];
      continue;
    }
    std::sort(ops.begin(), ops.begin() + n, [&](int x, int y) { return full[x] < full[y]; });
    for (int i = 0; i < n; ++i) {
      g.share[ops[i]] = std::min(full[ops[i]], left / (n - i));
      left -= g.share[ops[i]];
    }
  }
  for (int o = 0; o < 3; ++o) g.fits[o] = g.share[o] >= full[o];
  return g;
}

struct Part {
  int64_t ext = 0, count = 0;
};

// Full tiles and the one edge tile along a dimension.
inline int split(int64_t dim, int64_t tile, Part out[2]) {
  int n = 0;
  if (dim / tile > 0) out[n++] = {tile, dim / tile};
  if (dim % tile > 0) out[n++] = {dim % tile, 1};
  return n;
}

// Lane cycles summed over every tile of a GEMM, edge tiles at their real size.
inline double gemm_lane_cycles(const Stage& s, const DesignParams& p, double density) {
  Part pb[2], pm[2], pn[2], pk[2];
  const int nb = reference::split(s.batch, p.tile_b, pb), nm = reference::split(s.m, p.tile_x, pm),
            nn = reference::split(s.n, p.tile_x, pn), nk = reference::split(s.k, p.tile_y, pk);
  double total = 0;
  for (int b = 0; b < nb; ++b)
    for (int m = 0; m < nm; ++m)
      for (int n = 0; n < nn; ++n)
        for (int k = 0; k < nk; ++k)
          total += static_cast<double>(pb[b].count * pm[m].count * pn[n].count * pk[k].count) *
                   static_cast<double>(reference::tile_cycles(pb[b].ext, pm[m].ext, pn[n].ext,
                                                              pk[k].ext, density, p.macs));
  return total;
}

// The order in which tiles reach the buffers. Runs execute in waves of up to `lanes` at once,
// all stepping along the inner loop together, so in time the loops that pick runs within a
// wave sit inside the inner loop. Each outer loop is split into its trips across waves and
// within one.
struct Nest {
  std::array<Loop, 7> loop{};     // outer loops twice (across, within waves) and the inner
  std::array<double, 7> trips{};  // outermost first
  int n = 0;
  std::array<double, 4> wave{};  // per Loop: trips within one wave (the inner loop: all)
  void push(Loop l, double t) {
    loop[static_cast<size_t>(n)] = l;
    trips[static_cast<size_t>(n++)] = t;
  }
};

inline Nest temporal_nest(const GemmMap& g, const LoopOrder& order, int64_t lanes) {
  std::array<double, 4> across{}, within{};  // per position in `order`
  double wave = 1;
  for (int i = 3; i >= 0; --i) {
    const auto t = static_cast<double>(g.trips[static_cast<size_t>(order[static_cast<size_t>(i)])]);
    const auto at = static_cast<size_t>(i);
    if (order[at] == g.inner) continue;
    const double f = std::clamp(std::floor(static_cast<double>(lanes) / wave), 1.0, t);
    within[at] = f;
    across[at] = t / f;
    wave *= f;
  }
  Nest n;
  for (size_t i = 0; i < 4; ++i)
    n.wave[static_cast<size_t>(order[i])] =
        order[i] == g.inner ? static_cast<double>(g.trips[static_cast<size_t>(g.inner)])
                            : within[i];
  for (size_t i = 0; i < 4; ++i)
    if (order[i] != g.inner) n.push(order[i], across[i]);
  n.push(g.inner, static_cast<double>(g.trips[static_cast<size_t>(g.inner)]));
  for (size_t i = 0; i < 4; ++i)
    if (order[i] != g.inner) n.push(order[i], within[i]);
  return n;
}

// How many times an operand is brought on chip: once per trip of each loop that does not
// index it, where the tiles touched inside that loop exceed the operand's buffer share. A run's
// stationary operand is not touched along the run's loop.
inline double refetch(const GemmMap& g, int o, const Nest& nest) {
  if (g.fits[o]) return 1;
  const double capacity = std::floor(g.share[o] / g.tile_bytes[o]);
  double footprint = 1, mult = 1;
  for (int i = nest.n - 1; i >= 0; --i) {
    const Loop l = nest.loop[static_cast<size_t>(i)];
    const double t = nest.trips[static_cast<size_t>(i)];
    if (o == g.stationary && l == g.inner) continue;
    if (reference::indexes(o, l))
      footprint *= t;
    else if (t > 1 && footprint > capacity)
      mult *= t;
  }
  return mult;
}

// Distinct tiles of an operand one wave touches: its first step only (the prologue every lane
// of the wave waits for), or all of it.
inline double wave_tiles(const GemmMap& g, const Nest& nest, int o, bool first_step) {
  double tiles = 1;
  for (size_t l = 0; l < 4; ++l) {
    const bool run_loop = static_cast<Loop>(l) == g.inner;
    if (reference::indexes(o, static_cast<Loop>(l)) && !(run_loop && first_step))
      tiles *= nest.wave[l];
  }
  return tiles;
}

// Latency of a stage from its parts. With double buffering transfers hide behind compute
// except the first load and the last store; without it each lane alternates load and compute
// over its `units` of work (runs or tiles).
inline double overlap(const DesignParams& p, double compute, double waves, double units,
                      double main_cycles, double port_cycles, double fill, double drain) {
  if (p.double_buffering) return std::max({compute, main_cycles, port_cycles}) + fill + drain;
  const double per_unit =
      compute / std::max(waves, 1.0) + (main_cycles + port_cycles) / std::max(units, 1.0);
  return std::max({main_cycles, port_cycles, waves * per_unit}) + drain;
}

inline Activity gemm(const Stage& s, const DesignParams& p) {
  const GemmMap g = reference::map_gemm(s, p);
  Activity a;
  const auto tiles = static_cast<double>(g.tiles), runs = static_cast<double>(g.runs);
  const double lane_cycles = reference::gemm_lane_cycles(s, p, g.compute_density);
  const double waves = std::ceil(runs / static_cast<double>(p.lanes));
  const double compute = waves * lane_cycles / runs;

  const Nest nest = reference::temporal_nest(g, p.order, p.lanes);
  const std::array<double, 3> mult = {reference::refetch(g, kA, nest),
                                      reference::refetch(g, kB, nest),
                                      reference::refetch(g, kC, nest)};
  const auto ti = static_cast<double>(g.trips[1]), tj = static_cast<double>(g.trips[2]),
             tk = static_cast<double>(g.trips[3]);
  std::array<double, 3> main_data{}, port_data{};
  double main_mask = 0, port_mask = 0;
  for (int o : {kA, kB}) {
    main_data[o] = g.elems[o] * g.cost[o].data * mult[o];
    main_mask += g.elems[o] * g.cost[o].mask * mult[o];
    // Every tile reads its A and B tile, except a stationary one: once per run.
    const double reads = o == g.stationary ? 1 : o == kA ? tj : ti;
    port_data[o] = g.elems[o] * g.cost[o].data * reads;
    port_mask += g.elems[o] * g.cost[o].mask * reads;
  }
  // C: final result out once; partial sums spilled and read back once per extra pass.
  main_data[kC] = g.elems[kC] * (g.cost[kC].data + 2 * (mult[kC] - 1) * g.partial_bytes);
  main_mask += g.elems[kC] * g.cost[kC].mask;
  // Partial sums go back to the buffer after every step, unless they stay in the lane.
  port_data[kC] = g.elems[kC] * (g.stationary == kC ? 1 : 2 * tk - 1) * g.partial_bytes;

  for (int o : {kA, kB, kC}) {
    a.main_bytes += main_data[o];
    a.port_bytes += port_data[o];
    (g.in_weight_buffer[o] ? a.weight_bytes : a.act_bytes) += main_data[o] + port_data[o];
  }
  a.main_bytes += main_mask;
  a.port_bytes += port_mask;
  a.mask_bytes = main_mask + port_mask;
  a.lane_cycles = lane_cycles;
  a.dispatches = tiles;

  const double main_cycles = a.main_bytes / p.main_bpc;
  const double active_pes = std::min(static_cast<double>(p.pes), runs);
  const double port_cycles = a.port_bytes / (active_pes * p.port_bpc);
  // Every lane of the first wave waits for its first step's A and B tiles (the prologue), and
  // the results a wave finishes together leave after it (the epilogue).
  const double eb = static_cast<double>(g.ext[0]);
  const std::array<double, 3> tile_total = {
      eb * static_cast<double>(g.ext[1] * g.ext[3]) * g.cost[kA].total(),
      eb * static_cast<double>(g.ext[3] * g.ext[2]) * g.cost[kB].total(),
      eb * static_cast<double>(g.ext[1] * g.ext[2]) * g.cost[kC].total()};
  const double prologue = reference::wave_tiles(g, nest, kA, true) * tile_total[kA] +
                          reference::wave_tiles(g, nest, kB, true) * tile_total[kB];
  const double epilogue = std::min(reference::wave_tiles(g, nest, kC, false) * tile_total[kC],
                                   g.elems[kC] * g.cost[kC].total());
  const double first_c =
      g.stationary == kC ? 0 : eb * static_cast<double>(g.ext[1] * g.ext[2]) * g.partial_bytes;
  const double first_port = (tile_total[kA] + tile_total[kB] + first_c) / p.port_bpc;
  const double fill = prologue / p.main_bpc + first_port;
  const double drain = epilogue / p.main_bpc;
  a.compute_cycles = compute;
  a.memory_cycles = main_cycles;
  // Without double buffering each lane alternates loading and computing; either way the
  // channel and the ports must carry everything, results included.
  const double lanes_busy =
      p.double_buffering ? compute + fill
                         : compute + waves * (main_cycles + port_cycles) / std::max(runs, 1.0);
  a.cycles = std::max({lanes_busy + drain, main_cycles + first_port, port_cycles});
  return a;
}

// Softmax, layernorm and vector stages: tiles of rows (or elements) streamed from main memory
// through a unit and back.
inline Activity streamed(const Stage& s, const DesignParams& p) {
  const bool vector = s.kind == StageKind::Vector;
  const int64_t units = vector                         ? p.lanes
                        : s.kind == StageKind::Softmax ? p.softmax_units
                                                       : p.layernorm_units;
  const int64_t tiles = reference::stage_tiles(s, p);
  const int64_t items = vector ? s.elements : s.rows;  // what tiles are cut from
  const int64_t per_tile = vector ? p.tile_x * p.tile_y : p.tile_x;
  const int64_t full = items / per_tile, rest = items % per_tile;
  auto cycles_of = [&](int64_t n) -> double {
    if (n == 0) return 0;
    if (vector) {
      const double ops = s.ops * static_cast<double>(n) / static_cast<double>(s.elements);
      return std::ceil(ops / static_cast<double>(p.macs) - 1e-9);
    }
    const int64_t width = s.kind == StageKind::Softmax ? p.softmax_width : p.layernorm_width;
    return static_cast<double>(n * ceil_div(s.cols, width));
  };
  const double busy = static_cast<double>(full) * cycles_of(per_tile) + cycles_of(rest);
  const auto t = static_cast<double>(tiles);
  const double waves = std::ceil(t / static_cast<double>(units));
  const double compute = tiles > 0 ? waves * busy / t : 0;

  Activity a;
  const ElementCost in = reference::element_cost(s.dens_in, p),
                    out = reference::element_cost(s.dens_out, p);
  const double data = s.in_words * in.data + s.out_words * out.data;
  const double mask = s.in_words * in.mask + s.out_words * out.mask;
  a.main_bytes = a.port_bytes = data + mask;
  a.act_bytes = 2 * data;  // filled from memory, read by the unit; written, drained
  a.mask_bytes = 2 * mask;
  a.dispatches = t;
  (vector                         ? a.lane_cycles
   : s.kind == StageKind::Softmax ? a.softmax_cycles
                                  : a.layernorm_cycles) = busy;

  const double share =
      tiles > 0 ? std::min(1.0, static_cast<double>(per_tile) / static_cast<double>(items)) : 0;
  const double main_cycles = a.main_bytes / p.main_bpc;
  const double active_pes = std::max(1.0, std::min(static_cast<double>(p.pes), t));
  const double port_cycles = a.port_bytes / (active_pes * p.port_bpc);
  const double first_in = share * s.in_words * in.total();
  const double first_out = share * s.out_words * out.total();
  const double fill = first_in / p.main_bpc + (first_in + first_out) / p.port_bpc;
  const double drain = first_out / p.main_bpc;
  a.compute_cycles = compute;
  a.memory_cycles = main_cycles;
  a.cycles = reference::overlap(p, compute, waves, t, main_cycles, port_cycles, fill, drain);
  return a;
}

inline Activity fast_stage(const Stage& s, const DesignParams& p) {
  return s.kind == StageKind::Gemm ? reference::gemm(s, p) : reference::streamed(s, p);
}

inline Activity fast_total(const SimWorkload& w, const DesignParams& p) {
  Activity total;
  for (size_t i = 0; i < w.classes.size(); ++i)
    total.add_scaled(reference::fast_stage(w.classes[i], p), w.class_count[i]);
  return total;
}

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kUm2PerMm2 = 1e6;

// Energy per access grows with sqrt(size) (CACTI trend, as in AccelTran), per byte here.
inline double buffer_energy_per_byte(const BufferSpec& b, double mb, double dyn) {
  return dyn * b.access_energy_nj * std::sqrt(mb / b.reference_mb) / b.access_bytes;
}

inline DesignParams make_design_params(const AccelConfig& c, const HardwareLibrary& lib) {
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
  p.e_act_byte =
      reference::buffer_energy_per_byte(lib.buffer("activation"), c.activation_buffer_mb, dyn);
  p.e_weight_byte =
      reference::buffer_energy_per_byte(lib.buffer("weight"), c.weight_buffer_mb, dyn);
  p.e_mask_byte = reference::buffer_energy_per_byte(lib.buffer("mask"), c.mask_buffer_mb, dyn);
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

}  // namespace hwt::accel::reference
