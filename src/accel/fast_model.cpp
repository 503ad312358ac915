#include "accel/fast_model.h"

#include <algorithm>
#include <cmath>

#include "accel/mapping.h"
#include "core/error.h"

namespace hwt::accel {
namespace {

// The order in which tiles reach the buffers. Runs execute in waves of up to `lanes` at once,
// all stepping along the inner loop together, so in time the loops that pick runs within a
// wave sit inside the inner loop. Each outer loop is split into its trips across waves and
// within one.
struct Nest {
  std::array<Loop, 7> loop;     // outer loops twice (across, within waves) and the inner
  std::array<double, 7> trips;  // outermost first
  int n;
  std::array<double, 4> wave;  // per Loop: trips within one wave (the inner loop: all)
  void push(Loop l, double t) {
    loop[static_cast<size_t>(n)] = l;
    trips[static_cast<size_t>(n++)] = t;
  }
};

void temporal_nest(const std::array<int64_t, 4>& loop_trips, Loop inner, const LoopOrder& order,
                   int64_t lanes, Nest& n) {
  std::array<double, 4> across{}, within{};  // per position in `order`
  // Lanes per run of the loops placed so far: lanes over the product of their trips, at least
  // one, in integers (exact as the doubles were: every value is a whole number far below 2^53).
  // Dividing by the product equals dividing loop by loop (floor(floor(a / b) / c) =
  // floor(a / (b c))), and no loop waits on the division before it.
  int64_t placed = 1;
  for (int i = 3; i >= 0; --i) {
    const auto at = static_cast<size_t>(i);
    if (order[at] == inner) continue;
    const int64_t trips = loop_trips[static_cast<size_t>(order[at])];
    const int64_t f = std::min(std::max(lanes / placed, int64_t{1}), trips);
    within[at] = static_cast<double>(f);
    across[at] = static_cast<double>(trips) / static_cast<double>(f);
    placed *= trips;
  }
  const auto inner_trips = static_cast<double>(loop_trips[static_cast<size_t>(inner)]);
  n.n = 0;
  for (size_t i = 0; i < 4; ++i)
    n.wave[static_cast<size_t>(order[i])] = order[i] == inner ? inner_trips : within[i];
  for (size_t i = 0; i < 4; ++i)
    if (order[i] != inner) n.push(order[i], across[i]);
  n.push(inner, inner_trips);
  for (size_t i = 0; i < 4; ++i)
    if (order[i] != inner) n.push(order[i], within[i]);
}

// How many times an operand is brought on chip: once per trip of each loop that does not
// index it, where the tiles touched inside that loop exceed the `capacity` tiles of it that fit
// its buffer share. A run's stationary operand is not touched along the run's loop.
double refetch(const Nest& nest, int o, int stationary, Loop inner, double capacity) {
  double footprint = 1, mult = 1;
  for (int i = nest.n - 1; i >= 0; --i) {
    const Loop l = nest.loop[static_cast<size_t>(i)];
    const double t = nest.trips[static_cast<size_t>(i)];
    if (o == stationary && l == inner) continue;
    if (indexes(o, l))
      footprint *= t;
    else if (t > 1 && footprint > capacity)
      mult *= t;
  }
  return mult;
}

// Distinct tiles of an operand one wave touches: its first step only (the prologue every lane
// of the wave waits for), or all of it.
double wave_tiles(const Nest& nest, Loop inner, int o, bool first_step) {
  double tiles = 1;
  for (size_t l = 0; l < 4; ++l) {
    const bool run_loop = static_cast<Loop>(l) == inner;
    if (indexes(o, static_cast<Loop>(l)) && !(run_loop && first_step)) tiles *= nest.wave[l];
  }
  return tiles;
}

// Tiles / trips[inner], as a product.
double runs_along(const std::array<int64_t, 4>& trips, Loop inner) {
  int64_t runs = 1;
  for (size_t l = 0; l < 4; ++l)
    if (static_cast<Loop>(l) != inner) runs *= trips[l];
  return static_cast<double>(runs);
}

// Buffer <-> PE traffic when the runs keep `stationary` in the lane.
struct PortTraffic {
  std::array<double, 3> data{};
  double mask = 0, bytes = 0;
};

PortTraffic port_traffic(const GemmPlan& g, int stationary) {
  PortTraffic t;
  for (int o : {kA, kB}) {
    t.data[o] = o == stationary ? g.footprint[o] : g.moving_data[o];
    t.mask += o == stationary ? g.mask_bytes[o] : g.moving_mask[o];
  }
  t.data[kC] = stationary == kC ? g.c_in_lane : g.c_spilled;
  t.bytes = t.data[kA] + t.data[kB] + t.data[kC] + t.mask;
  return t;
}

// How a design walks a GEMM's tiles: the run loop, the runs in waves over the lanes and the
// tiles a wave touches. It depends on the trips, the loop order and the lanes alone, so the
// classes of one shape share it (StagePlan::shape). No member initialisers (nor in Nest):
// fast_total keeps one per shape, each filled by its shape's first class, none cleared.
struct Walk {
  Loop inner;
  int stationary;
  double runs, waves;
  Nest nest;
  std::array<double, 3> wave_tiles;  // A, B: the first step's; C: all
};

void walk(const std::array<int64_t, 4>& trips, const DesignParams& p, Walk& w) {
  w.inner = run_loop(trips, p.order);
  w.stationary = stationary_operand(w.inner);
  w.runs = runs_along(trips, w.inner);
  w.waves = std::ceil(w.runs / static_cast<double>(p.lanes));
  temporal_nest(trips, w.inner, p.order, p.lanes, w.nest);
  w.wave_tiles = {wave_tiles(w.nest, w.inner, kA, true), wave_tiles(w.nest, w.inner, kB, true),
                  wave_tiles(w.nest, w.inner, kC, false)};
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
[[gnu::always_inline]] inline Activity gemm(const GemmPlan& g, const Walk& w, double lane_cycles,
                                            const DesignParams& p) {
  const Loop inner = w.inner;
  const int stationary = w.stationary;
  const double runs = w.runs, waves = w.waves;
  const double compute = waves * lane_cycles / runs;

  // Main memory: each operand once per refetch (what of it stays on chip: share_buffers); C's
  // final result out once, its partial sums spilled and read back once per extra pass.
  const BufferShares shares = share_buffers(g.buffers, g.footprint, p);
  const PortTraffic port = port_traffic(g, stationary);
  std::array<double, 3> mult{};
  for (int o : {kA, kB, kC})
    mult[o] = shares.fits[o] ? 1
                             : refetch(w.nest, o, stationary, inner,
                                       std::floor(shares.share[o] / g.tile_bytes[o]));
  const std::array<double, 3> main_data = {
      g.footprint[kA] * mult[kA], g.footprint[kB] * mult[kB],
      g.elems[kC] * (g.cost[kC].data + 2 * (mult[kC] - 1) * g.partial_bytes)};
  const double main_mask =
      g.mask_bytes[kA] * mult[kA] + g.mask_bytes[kB] * mult[kB] + g.mask_bytes[kC];
  Activity a;
  for (int o : {kA, kB, kC}) {
    a.main_bytes += main_data[o];
    (g.in_weight_buffer[o] ? a.weight_bytes : a.act_bytes) += main_data[o] + port.data[o];
  }
  a.main_bytes += main_mask;
  a.port_bytes = port.bytes;
  a.mask_bytes = main_mask + port.mask;
  a.lane_cycles = lane_cycles;
  a.dispatches = static_cast<double>(g.tiles);

  const double main_cycles = a.main_bytes / p.main_bpc;
  const double active_pes = std::min(static_cast<double>(p.pes), runs);
  const double port_cycles = a.port_bytes / (active_pes * p.port_bpc);
  // Every lane of the first wave waits for its first step's A and B tiles (the prologue), and
  // the results a wave finishes together leave after it (the epilogue).
  const double prologue = w.wave_tiles[kA] * g.tile_total[kA] + w.wave_tiles[kB] * g.tile_total[kB];
  const double epilogue = std::min(w.wave_tiles[kC] * g.tile_total[kC], g.c_total);
  // The first step reads an A and a B tile and, unless C stays in the lane, its partial sums.
  const double first_port =
      (g.tile_total[kA] + g.tile_total[kB] + (stationary == kC ? 0 : g.first_c)) / p.port_bpc;
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

// Softmax, layernorm and vector stages: tiles streamed from main memory through a unit and back.
[[gnu::always_inline]] inline Activity streamed(StageKind kind, const StreamPlan& s, double busy,
                                                const DesignParams& p) {
  const int64_t units = kind == StageKind::Vector    ? p.lanes
                        : kind == StageKind::Softmax ? p.softmax_units
                                                     : p.layernorm_units;
  const double waves = std::ceil(s.tiles / static_cast<double>(units));
  const double compute = s.tiles > 0 ? waves * busy / s.tiles : 0;

  Activity a;
  a.main_bytes = a.port_bytes = s.bytes;
  a.act_bytes = s.act_bytes;
  a.mask_bytes = s.mask_bytes;
  a.dispatches = s.tiles;
  (kind == StageKind::Vector    ? a.lane_cycles
   : kind == StageKind::Softmax ? a.softmax_cycles
                                : a.layernorm_cycles) = busy;

  const double main_cycles = a.main_bytes / p.main_bpc;
  const double active_pes = std::max(1.0, std::min(static_cast<double>(p.pes), s.tiles));
  const double port_cycles = a.port_bytes / (active_pes * p.port_bpc);
  const double fill = s.first_in / p.main_bpc + s.first_both / p.port_bpc;
  const double drain = s.first_out / p.main_bpc;
  a.compute_cycles = compute;
  a.memory_cycles = main_cycles;
  a.cycles = overlap(p, compute, waves, s.tiles, main_cycles, port_cycles, fill, drain);
  return a;
}

// `walks`: one per shape of the plans' GEMMs (StagePlan::shape); `own`: for a GEMM of none.
[[gnu::always_inline]] inline Activity stage(const StagePlan& s, const DesignParams& p, Walk* walks,
                                             Walk& own) {
  if (s.kind != StageKind::Gemm) return streamed(s.kind, s.stream, s.busy, p);
  Walk& w = s.shape < 0 ? own : walks[s.shape];
  if (s.shape < 0 || s.first_of_shape) walk(s.gemm.trips, p, w);
  return gemm(s.gemm, w, s.busy, p);
}

}  // namespace

Activity fast_stage(const Stage& s, const DesignParams& p) {
  StagePlan plan;
  plan_stage(s, p, plan);
  Walk own;
  return stage(plan, p, nullptr, own);
}

std::vector<Activity> fast_classes(const SimWorkload& w, const DesignParams& p) {
  std::vector<Activity> out;
  out.reserve(w.classes.size());
  for (const Stage& s : w.classes) out.push_back(fast_stage(s, p));
  return out;
}

Activity fast_total(const SimWorkload& w, const DesignParams& p, std::span<const StagePlan> plans) {
  HWT_CHECK(plans.empty() || plans.size() == w.classes.size(),
            "{} stage plans for {} stage classes", plans.size(), w.classes.size());
  Activity total;
  Walk own;
  if (plans.empty()) {
    StagePlan plan;  // each class planned here in turn
    for (size_t i = 0; i < w.classes.size(); ++i) {
      plan_stage(w.classes[i], p, plan);
      total.add_scaled(stage(plan, p, nullptr, own), w.class_count[i]);
    }
    return total;
  }
  std::array<Walk, kSharedWalks> walks;
  for (size_t i = 0; i < w.classes.size(); ++i)
    total.add_scaled(stage(plans[i], p, walks.data(), own), w.class_count[i]);
  return total;
}

}  // namespace hwt::accel
