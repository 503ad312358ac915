#include "accel/fast_plan.h"

#include <algorithm>
#include <cmath>

namespace hwt::accel {
namespace {

struct Part {
  int64_t ext = 0, count = 0;
};

// Full tiles and the one edge tile along a loop.
int split(const GemmTiling& g, size_t l, Part out[2]) {
  int n = 0;
  if (g.full[l] > 0) out[n++] = {g.ext[l], g.full[l]};
  if (g.edge[l] > 0) out[n++] = {g.edge[l], 1};
  return n;
}

// Lane cycles summed over every tile of a GEMM, edge tiles at their real size.
double gemm_lane_cycles(const GemmLayout& g, int64_t macs) {
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

// The plan of a GEMM whose layout `plan` already holds.
void plan_gemm(GemmPlan& plan) {
  const GemmLayout& g = plan;
  group_buffers(g, plan.buffers);
  for (int o : {kA, kB, kC}) plan.mask_bytes[o] = g.elems[o] * g.cost[o].mask;
  const double eb = static_cast<double>(g.ext[0]);
  plan.tile_total = {eb * static_cast<double>(g.ext[1] * g.ext[3]) * g.cost[kA].total(),
                     eb * static_cast<double>(g.ext[3] * g.ext[2]) * g.cost[kB].total(),
                     eb * static_cast<double>(g.ext[1] * g.ext[2]) * g.cost[kC].total()};
  plan.c_total = g.elems[kC] * g.cost[kC].total();
  const auto ti = static_cast<double>(g.trips[1]), tj = static_cast<double>(g.trips[2]),
             tk = static_cast<double>(g.trips[3]);
  plan.moving_data = {g.footprint[kA] * tj, g.footprint[kB] * ti};
  plan.moving_mask = {plan.mask_bytes[kA] * tj, plan.mask_bytes[kB] * ti};
  plan.c_in_lane = g.elems[kC] * g.partial_bytes;
  plan.c_spilled = g.elems[kC] * (2 * tk - 1) * g.partial_bytes;
  plan.first_c = eb * static_cast<double>(g.ext[1] * g.ext[2]) * g.partial_bytes;
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

// Tiles streamed from main memory through a unit and back; the first one waits to be filled,
// the last to be drained.
StreamPlan plan_stream(const Stage& s, const DesignParams& p, const RowTiles& r) {
  StreamPlan plan;
  const int64_t tiles = r.count();
  plan.tiles = static_cast<double>(tiles);
  const ElementCost in = element_cost(s.dens_in, p), out = element_cost(s.dens_out, p);
  const double data = s.in_words * in.data + s.out_words * out.data;
  const double mask = s.in_words * in.mask + s.out_words * out.mask;
  plan.bytes = data + mask;
  plan.act_bytes = 2 * data;  // filled from memory, read by the unit; written, drained
  plan.mask_bytes = 2 * mask;
  const double share =
      tiles > 0 ? std::min(1.0, static_cast<double>(r.per_tile) / static_cast<double>(r.items)) : 0;
  plan.first_in = share * s.in_words * in.total();
  plan.first_out = share * s.out_words * out.total();
  plan.first_both = plan.first_in + plan.first_out;
  return plan;
}

}  // namespace

void plan_stage(const Stage& s, const DesignParams& p, StagePlan& plan) {
  plan.kind = s.kind;
  plan.shape = -1;
  plan.first_of_shape = false;
  if (s.kind == StageKind::Gemm) {
    layout_gemm(s, p, plan.gemm);
    plan_gemm(plan.gemm);
    plan.busy = gemm_lane_cycles(plan.gemm, p.macs);
  } else {
    const RowTiles r = row_tiles(s, p);
    plan.stream = plan_stream(s, p, r);
    plan.busy = streamed_busy(s, p, r);
  }
}

std::vector<StagePlan> plan_classes(const SimWorkload& w, const DesignParams& p) {
  std::vector<StagePlan> out;
  out.reserve(w.classes.size());
  std::vector<std::array<int64_t, 4>> shapes;  // trips, in shape order
  for (const Stage& s : w.classes) {
    StagePlan& plan = out.emplace_back();
    plan_stage(s, p, plan);
    if (plan.kind != StageKind::Gemm) continue;
    const auto known = std::find(shapes.begin(), shapes.end(), plan.gemm.trips);
    if (known == shapes.end()) {
      if (shapes.size() == kSharedWalks) continue;
      plan.first_of_shape = true;
      shapes.push_back(plan.gemm.trips);
      plan.shape = static_cast<int>(shapes.size()) - 1;
    } else {
      plan.shape = static_cast<int>(known - shapes.begin());
    }
  }
  return out;
}

}  // namespace hwt::accel
