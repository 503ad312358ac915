#include "accel/fast_model.h"

#include <algorithm>
#include <cmath>

#include "accel/mapping.h"
#include "core/error.h"

namespace hwt::accel {
namespace {

struct Part {
  int64_t ext = 0, count = 0;
};

// Full tiles and the one edge tile along a loop.
int split(const GemmMap& g, size_t l, Part out[2]) {
  int n = 0;
  if (g.full[l] > 0) out[n++] = {g.ext[l], g.full[l]};
  if (g.edge[l] > 0) out[n++] = {g.edge[l], 1};
  return n;
}

// Lane cycles summed over every tile of a GEMM, edge tiles at their real size.
double gemm_lane_cycles(const GemmMap& g, int64_t macs) {
  Part pb[2], pm[2], pn[2], pk[2];
  const int nb = split(g, 0, pb), nm = split(g, 1, pm), nn = split(g, 2, pn), nk = split(g, 3, pk);
  double total = 0;
  for (int b = 0; b < nb; ++b)
    for (int m = 0; m < nm; ++m)
      for (int n = 0; n < nn; ++n)
        for (int k = 0; k < nk; ++k)
          total += static_cast<double>(pb[b].count * pm[m].count * pn[n].count * pk[k].count) *
                   static_cast<double>(tile_cycles(pb[b].ext, pm[m].ext, pn[n].ext, pk[k].ext,
                                                   g.compute_density, macs));
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

Nest temporal_nest(const GemmMap& g, const LoopOrder& order, int64_t lanes) {
  std::array<double, 4> across{}, within{};  // per position in `order`
  // Lanes per run of the loops placed so far, floor(lanes / wave), in integers: exact as the
  // doubles were (every value is a whole number far below 2^53), and each loop no longer waits
  // on a floating-point division by the one before.
  int64_t room = lanes;
  for (int i = 3; i >= 0; --i) {
    const auto at = static_cast<size_t>(i);
    if (order[at] == g.inner) continue;
    const int64_t trips = g.trips[static_cast<size_t>(order[at])];
    const int64_t f = std::clamp(room, int64_t{1}, trips);
    within[at] = static_cast<double>(f);
    across[at] = static_cast<double>(trips) / static_cast<double>(f);
    room = f == room ? 1 : room / f;
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
double refetch(const GemmMap& g, int o, const Nest& nest) {
  if (g.fits[o]) return 1;
  const double capacity = std::floor(g.share[o] / g.tile_bytes[o]);
  double footprint = 1, mult = 1;
  for (int i = nest.n - 1; i >= 0; --i) {
    const Loop l = nest.loop[static_cast<size_t>(i)];
    const double t = nest.trips[static_cast<size_t>(i)];
    if (o == g.stationary && l == g.inner) continue;
    if (indexes(o, l))
      footprint *= t;
    else if (t > 1 && footprint > capacity)
      mult *= t;
  }
  return mult;
}

// Distinct tiles of an operand one wave touches: its first step only (the prologue every lane
// of the wave waits for), or all of it.
double wave_tiles(const GemmMap& g, const Nest& nest, int o, bool first_step) {
  double tiles = 1;
  for (size_t l = 0; l < 4; ++l) {
    const bool run_loop = static_cast<Loop>(l) == g.inner;
    if (indexes(o, static_cast<Loop>(l)) && !(run_loop && first_step)) tiles *= nest.wave[l];
  }
  return tiles;
}

// Latency of a stage from its parts. With double buffering transfers hide behind compute
// except the first load and the last store; without it each lane alternates load and compute
// over its `units` of work (runs or tiles).
double overlap(const DesignParams& p, double compute, double waves, double units,
               double main_cycles, double port_cycles, double fill, double drain) {
  if (p.double_buffering) return std::max({compute, main_cycles, port_cycles}) + fill + drain;
  const double per_unit =
      compute / std::max(waves, 1.0) + (main_cycles + port_cycles) / std::max(units, 1.0);
  return std::max({main_cycles, port_cycles, waves * per_unit}) + drain;
}

// gemm and streamed are inlined into their callers (the attribute) so that a stage's activity
// reaches the workload's sum in registers: returned through memory, the sum's vector loads
// stalled on the stage's scalar stores (store-to-load forwarding, seen with perf).
// `known`: the stage's tiling and lane cycles when already known (class_tilings), else null.
[[gnu::always_inline]] inline Activity gemm(const Stage& s, const DesignParams& p,
                                            const StageTiling* known) {
  const GemmMap g = known ? map_gemm(s, p, known->gemm) : map_gemm(s, p);
  Activity a;
  const auto tiles = static_cast<double>(g.tiles), runs = static_cast<double>(g.runs);
  const double lane_cycles = known ? known->busy : gemm_lane_cycles(g, p.macs);
  const double waves = std::ceil(runs / static_cast<double>(p.lanes));
  const double compute = waves * lane_cycles / runs;

  const Nest nest = temporal_nest(g, p.order, p.lanes);
  const std::array<double, 3> mult = {refetch(g, kA, nest), refetch(g, kB, nest),
                                      refetch(g, kC, nest)};
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
  const double prologue = wave_tiles(g, nest, kA, true) * tile_total[kA] +
                          wave_tiles(g, nest, kB, true) * tile_total[kB];
  const double epilogue =
      std::min(wave_tiles(g, nest, kC, false) * tile_total[kC], g.elems[kC] * g.cost[kC].total());
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

// Softmax, layernorm and vector stages are cut into tiles of rows (or elements).
struct RowTiles {
  int64_t items = 0, per_tile = 0;  // what tiles are cut from; how many go in one
  int64_t full = 0, rest = 0;       // full tiles, and the items of the partial one
  int64_t count() const { return full + (rest > 0 ? 1 : 0); }  // stage_tiles(s, p)
};

RowTiles row_tiles(const Stage& s, const DesignParams& p) {
  const bool vector = s.kind == StageKind::Vector;
  RowTiles r;
  r.items = vector ? s.elements : s.rows;
  r.per_tile = vector ? p.tile_x * p.tile_y : p.tile_x;
  r.full = r.items / r.per_tile;
  r.rest = r.items - r.full * r.per_tile;
  return r;
}

// Busy cycles of a streamed stage's units, the partial tile at its size.
double streamed_busy(const Stage& s, const DesignParams& p, const RowTiles& r) {
  auto cycles_of = [&](int64_t n) -> double {
    if (n == 0) return 0;
    if (s.kind == StageKind::Vector) {
      const double ops = s.ops * static_cast<double>(n) / static_cast<double>(s.elements);
      return std::ceil(ops / static_cast<double>(p.macs) - 1e-9);
    }
    const int64_t width = s.kind == StageKind::Softmax ? p.softmax_width : p.layernorm_width;
    return static_cast<double>(n * ceil_div(s.cols, width));
  };
  return static_cast<double>(r.full) * cycles_of(r.per_tile) + cycles_of(r.rest);
}

// Softmax, layernorm and vector stages: tiles streamed from main memory through a unit and
// back. `known` as for gemm.
[[gnu::always_inline]] inline Activity streamed(const Stage& s, const DesignParams& p,
                                                const StageTiling* known) {
  const bool vector = s.kind == StageKind::Vector;
  const int64_t units = vector                         ? p.lanes
                        : s.kind == StageKind::Softmax ? p.softmax_units
                                                       : p.layernorm_units;
  const RowTiles r = row_tiles(s, p);
  const int64_t tiles = r.count(), items = r.items, per_tile = r.per_tile;
  const double busy = known ? known->busy : streamed_busy(s, p, r);
  const auto t = static_cast<double>(tiles);
  const double waves = std::ceil(t / static_cast<double>(units));
  const double compute = tiles > 0 ? waves * busy / t : 0;

  Activity a;
  const ElementCost in = element_cost(s.dens_in, p), out = element_cost(s.dens_out, p);
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
  a.cycles = overlap(p, compute, waves, t, main_cycles, port_cycles, fill, drain);
  return a;
}

[[gnu::always_inline]] inline Activity stage(const Stage& s, const DesignParams& p,
                                             const StageTiling* known) {
  return s.kind == StageKind::Gemm ? gemm(s, p, known) : streamed(s, p, known);
}

}  // namespace

Activity fast_stage(const Stage& s, const DesignParams& p) {
  return stage(s, p, nullptr);
}

std::vector<Activity> fast_classes(const SimWorkload& w, const DesignParams& p) {
  std::vector<Activity> out;
  out.reserve(w.classes.size());
  for (const Stage& s : w.classes) out.push_back(stage(s, p, nullptr));
  return out;
}

std::vector<StageTiling> class_tilings(const SimWorkload& w, const DesignParams& p) {
  std::vector<StageTiling> out;
  out.reserve(w.classes.size());
  for (const Stage& s : w.classes) {
    StageTiling t;
    if (s.kind == StageKind::Gemm) {
      t.gemm = tile_gemm(s, p);
      t.busy = gemm_lane_cycles(map_gemm(s, p, t.gemm), p.macs);
    } else {
      t.busy = streamed_busy(s, p, row_tiles(s, p));
    }
    out.push_back(t);
  }
  return out;
}

Activity fast_total(const SimWorkload& w, const DesignParams& p,
                    std::span<const StageTiling> tilings) {
  HWT_CHECK(tilings.empty() || tilings.size() == w.classes.size(),
            "{} stage tilings for {} stage classes", tilings.size(), w.classes.size());
  Activity total;
  for (size_t i = 0; i < w.classes.size(); ++i)
    total.add_scaled(stage(w.classes[i], p, tilings.empty() ? nullptr : &tilings[i]),
                     w.class_count[i]);
  return total;
}

}  // namespace hwt::accel
