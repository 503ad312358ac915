#include "accel/tile_sim.h"

#include <algorithm>
#include <queue>
#include <utility>

#include "accel/mapping.h"
#include "accel/tile_lru.h"

namespace hwt::accel {
namespace {

// Timing resources of one stage: identical units (lanes, softmax or layernorm units) spread
// over the PEs, each PE's buffer port, and the main-memory channel. Units are served in the
// order of the time they can next issue a fetch, so requests reach the channel and the ports
// in time order.
class Machine {
 public:
  Machine(const DesignParams& p, int64_t units)
      : p_(p),
        free_(static_cast<size_t>(std::max<int64_t>(1, units)), 0.0),
        prev_start_(free_.size(), 0.0),
        busy_(free_.size(), 0.0),
        port_free_(static_cast<size_t>(p.pes), 0.0) {
    for (size_t u = 0; u < free_.size(); ++u) heap_.emplace(0.0, static_cast<int64_t>(u));
  }

  // The unit that can issue its next fetch first (lowest id among ties, so consecutive work
  // goes to different PEs). False once every unit has retired.
  bool next(int64_t* u) {
    if (heap_.empty()) return false;
    *u = heap_.top().second;
    heap_.pop();
    return true;
  }

  // When the unit may start fetching its next tile: while computing the current one with
  // double buffering, else once it is done.
  double issue_time(int64_t u) const {
    const auto i = static_cast<size_t>(u);
    return p_.double_buffering ? prev_start_[i] : free_[i];
  }

  // A main-memory read issued at `at`: pending write-backs use the channel's idle time first.
  double read(double at, double bytes) {
    if (bytes <= 0) return at;
    if (chan_ < at) {
      debt_ = std::max(0.0, debt_ - (at - chan_) * p_.main_bpc);
      chan_ = at;
    }
    chan_ += bytes / p_.main_bpc;
    return chan_;
  }

  // A write-back of data produced at `at`: served in the channel's idle time, but never
  // before it exists (write_tail_ serialises writes in production order).
  void write(double bytes, double at) {
    debt_ += bytes;
    write_tail_ = std::max(write_tail_, at) + bytes / p_.main_bpc;
  }

  double port(int64_t u, double at, double bytes) {
    double& f = port_free_[static_cast<size_t>(u % p_.pes)];
    f = std::max(f, at) + bytes / p_.port_bpc;
    return f;
  }

  // Runs a tile on the unit once its data is ready and puts the unit back in line; returns
  // when the tile finishes.
  double run(int64_t u, double ready, double cycles) {
    const auto i = static_cast<size_t>(u);
    const double start = std::max(free_[i], ready);
    prev_start_[i] = start;
    free_[i] = start + cycles;
    busy_[i] += cycles;
    max_busy_ = std::max(max_busy_, busy_[i]);
    last_ = std::max(last_, free_[i]);
    heap_.emplace(issue_time(u), u);
    return free_[i];
  }

  double end() const { return std::max({last_, chan_ + debt_ / p_.main_bpc, write_tail_}); }
  double max_busy() const { return max_busy_; }

 private:
  const DesignParams& p_;
  std::vector<double> free_, prev_start_, busy_, port_free_;
  std::priority_queue<std::pair<double, int64_t>, std::vector<std::pair<double, int64_t>>,
                      std::greater<>>
      heap_;
  double chan_ = 0, debt_ = 0, write_tail_ = 0, last_ = 0, max_busy_ = 0;
};

int64_t capacity_tiles(const GemmMap& g, int o) {
  if (g.fits[o]) return TileLru::kUnlimited;
  return static_cast<int64_t>(g.share[o] / g.tile_bytes[o]);
}

Activity gemm(const Stage& s, const DesignParams& p) {
  const GemmMap g = map_gemm(s, p);
  const std::array<int64_t, 4> tile = {p.tile_b, p.tile_x, p.tile_x, p.tile_y};
  const int64_t tb = g.trips[0], ti = g.trips[1], tj = g.trips[2], tk = g.trips[3];
  TileLru lru[3] = {TileLru(tb * ti * tk, capacity_tiles(g, kA)),
                    TileLru(tb * tk * tj, capacity_tiles(g, kB)),
                    TileLru(tb * ti * tj, capacity_tiles(g, kC))};
  std::vector<int64_t> passes(static_cast<size_t>(tb * ti * tj), 0);  // k steps done per C tile
  std::vector<double> c_elems(passes.size(), 0.0), c_done(passes.size(), 0.0);
  std::vector<double> arrival[2] = {std::vector<double>(static_cast<size_t>(tb * ti * tk), 0.0),
                                    std::vector<double>(static_cast<size_t>(tb * tk * tj), 0.0)};
  Machine mc(p, std::min(p.lanes, g.runs));
  Activity a;
  std::array<double, 3> main_data{}, port_data{};
  double main_mask = 0, port_mask = 0;

  // A C tile leaving the buffer: final results pruned and compressed, partial sums dense.
  auto write_c = [&](int64_t id) {
    const auto i = static_cast<size_t>(id);
    const double el = c_elems[i];
    const bool final = passes[i] == tk;
    const double data = el * (final ? g.cost[kC].data : g.partial_bytes);
    const double mask = final ? el * g.cost[kC].mask : 0;
    main_data[kC] += data;
    main_mask += mask;
    mc.write(data + mask, c_done[i]);
  };

  // Runs are handed out in loop order to whichever lane can issue first; a lane walks its
  // run along the inner loop.
  const auto inner = static_cast<size_t>(g.inner);
  const size_t lanes = static_cast<size_t>(std::min(p.lanes, g.runs));
  std::vector<std::array<int64_t, 4>> lane_idx(lanes);
  std::vector<int64_t> lane_left(lanes, 0);
  std::array<int64_t, 4> next_run{};
  int64_t runs_left = g.runs, u = 0;
  while (mc.next(&u)) {
    std::array<int64_t, 4>& idx = lane_idx[static_cast<size_t>(u)];
    int64_t& left = lane_left[static_cast<size_t>(u)];
    if (left == 0) {
      if (runs_left == 0) continue;  // nothing left: the lane retires
      idx = next_run;
      left = g.trips[inner];
      --runs_left;
      for (int d = 3; d >= 0; --d) {  // the next run: outer loops in order, innermost fastest
        const auto l = static_cast<size_t>(p.order[static_cast<size_t>(d)]);
        if (l == inner) continue;
        if (++next_run[l] < g.trips[l]) break;
        next_run[l] = 0;
      }
    }
    std::array<int64_t, 4> e{};
    for (size_t l = 0; l < 4; ++l)
      e[l] = idx[l] == g.trips[l] - 1 ? g.dim[l] - idx[l] * tile[l] : tile[l];
    const int64_t ib = idx[0], ii = idx[1], ij = idx[2], ik = idx[3];
    const int64_t ids[3] = {(ib * ti + ii) * tk + ik, (ib * tk + ik) * tj + ij,
                            (ib * ti + ii) * tj + ij};
    const double elems[3] = {static_cast<double>(e[0] * e[1] * e[3]),
                             static_cast<double>(e[0] * e[3] * e[2]),
                             static_cast<double>(e[0] * e[1] * e[2])};
    const bool run_start = idx[inner] == 0, run_end = idx[inner] == g.trips[inner] - 1;
    c_elems[static_cast<size_t>(ids[kC])] = elems[kC];

    // A and B: from the buffer (fetched on a miss), except a stationary operand mid-run,
    // which is still in the lane.
    double fetch = 0, port_bytes = 0;
    bool missed[2] = {false, false};
    for (int o : {kA, kB}) {
      if (o == g.stationary && !run_start) continue;
      int64_t evicted = 0;  // A and B are read-only: evictions cost nothing
      if (!lru[o].touch(ids[o], &evicted)) {
        main_data[o] += elems[o] * g.cost[o].data;
        main_mask += elems[o] * g.cost[o].mask;
        fetch += elems[o] * g.cost[o].total();
        missed[o] = true;
      }
      port_data[o] += elems[o] * g.cost[o].data;
      port_mask += elems[o] * g.cost[o].mask;
      port_bytes += elems[o] * g.cost[o].total();
    }
    // C: output-stationary runs keep partial sums in the lane and write once at the end;
    // otherwise each step reads (after k = 0) and writes its partial sums in the buffer.
    const double partial = elems[kC] * g.partial_bytes;
    const bool c_in_lane = g.stationary == kC;
    if (!c_in_lane || run_start) {
      int64_t evicted = -1;
      if (!lru[kC].touch(ids[kC], &evicted) && ik > 0) {  // partial sums spilled earlier
        main_data[kC] += partial;
        fetch += partial;
      }
      if (evicted >= 0) write_c(evicted);
    }
    const double c_port = c_in_lane ? (run_end ? partial : 0) : (ik > 0 ? 2 : 1) * partial;
    port_data[kC] += c_port;
    port_bytes += c_port;

    double arrive = mc.read(mc.issue_time(u), fetch);
    for (int o : {kA, kB}) {  // a hit may still be in flight for an earlier tile
      double& t_o = arrival[o][static_cast<size_t>(ids[o])];
      if (missed[o]) t_o = arrive;
      arrive = std::max(arrive, t_o);
    }
    const double ready = mc.port(u, arrive, port_bytes);
    const auto cycles =
        static_cast<double>(tile_cycles(e[0], e[1], e[2], e[3], g.compute_density, p.macs));
    const auto ci = static_cast<size_t>(ids[kC]);
    c_done[ci] = std::max(c_done[ci], mc.run(u, ready, cycles));
    a.lane_cycles += cycles;
    ++passes[ci];
    if ((!c_in_lane || run_end) && !lru[kC].resident(ids[kC]))
      write_c(ids[kC]);  // no room to keep it

    ++idx[inner];
    --left;
  }
  // Results still in the buffer leave in the order they were finished.
  std::vector<std::pair<double, int64_t>> finished;
  for (int64_t id = 0; id < tb * ti * tj; ++id)
    if (lru[kC].resident(id)) finished.emplace_back(c_done[static_cast<size_t>(id)], id);
  std::sort(finished.begin(), finished.end());
  for (const auto& f : finished) write_c(f.second);

  for (int o : {kA, kB, kC}) {
    a.main_bytes += main_data[o];
    a.port_bytes += port_data[o];
    (g.in_weight_buffer[o] ? a.weight_bytes : a.act_bytes) += main_data[o] + port_data[o];
  }
  a.main_bytes += main_mask;
  a.port_bytes += port_mask;
  a.mask_bytes = main_mask + port_mask;
  a.dispatches = static_cast<double>(g.tiles);
  a.cycles = mc.end();
  a.compute_cycles = mc.max_busy();
  a.memory_cycles = a.main_bytes / p.main_bpc;
  return a;
}

Activity streamed(const Stage& s, const DesignParams& p) {
  const bool vector = s.kind == StageKind::Vector;
  const int64_t units = vector                         ? p.lanes
                        : s.kind == StageKind::Softmax ? p.softmax_units
                                                       : p.layernorm_units;
  const int64_t width = s.kind == StageKind::Softmax ? p.softmax_width : p.layernorm_width;
  const int64_t tiles = stage_tiles(s, p);
  const int64_t items = vector ? s.elements : s.rows;
  const int64_t per_tile = vector ? p.tile_x * p.tile_y : p.tile_x;
  const ElementCost in = element_cost(s.dens_in, p), out = element_cost(s.dens_out, p);
  Machine mc(p, std::min(units, tiles));
  Activity a;
  for (int64_t t = 0, u = 0; t < tiles && mc.next(&u); ++t) {
    const int64_t n = std::min(per_tile, items - t * per_tile);
    const double frac = static_cast<double>(n) / static_cast<double>(items);
    const double in_bytes = frac * s.in_words * in.total();
    const double out_bytes = frac * s.out_words * out.total();
    const double cycles = vector ? std::ceil(s.ops * frac / static_cast<double>(p.macs) - 1e-9)
                                 : static_cast<double>(n * ceil_div(s.cols, width));
    const double arrive = mc.read(mc.issue_time(u), in_bytes);
    const double ready = mc.port(u, arrive, in_bytes + out_bytes);
    mc.write(out_bytes, mc.run(u, ready, cycles));
    (vector                         ? a.lane_cycles
     : s.kind == StageKind::Softmax ? a.softmax_cycles
                                    : a.layernorm_cycles) += cycles;
  }
  const double data = s.in_words * in.data + s.out_words * out.data;
  const double mask = s.in_words * in.mask + s.out_words * out.mask;
  a.main_bytes = a.port_bytes = data + mask;
  a.act_bytes = 2 * data;
  a.mask_bytes = 2 * mask;
  a.dispatches = static_cast<double>(tiles);
  a.cycles = mc.end();
  a.compute_cycles = mc.max_busy();
  a.memory_cycles = a.main_bytes / p.main_bpc;
  return a;
}

}  // namespace

Activity detailed_stage(const Stage& s, const DesignParams& p) {
  return s.kind == StageKind::Gemm ? gemm(s, p) : streamed(s, p);
}

std::vector<Activity> detailed_classes(const SimWorkload& w, const DesignParams& p,
                                       const std::function<void(size_t, size_t)>& progress) {
  std::vector<Activity> out;
  out.reserve(w.classes.size());
  for (const Stage& s : w.classes) {
    out.push_back(detailed_stage(s, p));
    if (progress) progress(out.size(), w.classes.size());
  }
  return out;
}

}  // namespace hwt::accel
