#include "accel/mapping.h"

#include <algorithm>
#include <cmath>

namespace hwt::accel {
namespace {

void tile_gemm(const Stage& s, const DesignParams& p, GemmTiling& t) {
  const std::array<int64_t, 4> dim = {s.batch, s.m, s.n, s.k};
  const std::array<int64_t, 4> tile = {p.tile_b, p.tile_x, p.tile_x, p.tile_y};
  t.tiles = 1;
  for (size_t l = 0; l < 4; ++l) {
    t.full[l] = dim[l] / tile[l];  // one division per loop; the rest follows from it
    t.edge[l] = dim[l] - t.full[l] * tile[l];
    t.trips[l] = t.full[l] + (t.edge[l] > 0 ? 1 : 0);
    t.ext[l] = t.full[l] > 0 ? tile[l] : t.edge[l];
    t.tiles *= t.trips[l];
  }
}

}  // namespace

int64_t stage_tiles(const Stage& s, const DesignParams& p) {
  if (s.kind == StageKind::Vector) return ceil_div(s.elements, p.tile_x * p.tile_y);
  return ceil_div(s.rows, p.tile_x);
}

void layout_gemm(const Stage& s, const DesignParams& p, GemmLayout& g) {
  tile_gemm(s, p, g);
  g.dim = {s.batch, s.m, s.n, s.k};
  const double b = static_cast<double>(s.batch);
  g.elems = {b * static_cast<double>(s.m * s.k), b * static_cast<double>(s.k * s.n),
             b * static_cast<double>(s.m * s.n)};
  g.cost = {element_cost(s.dens_a, p), element_cost(s.dens_b, p), element_cost(s.dens_c, p)};
  g.partial_bytes = p.word_bytes;
  const double eb = static_cast<double>(g.ext[0]);
  g.tile_bytes = {eb * static_cast<double>(g.ext[1] * g.ext[3]) * g.cost[kA].data,
                  eb * static_cast<double>(g.ext[3] * g.ext[2]) * g.cost[kB].data,
                  eb * static_cast<double>(g.ext[1] * g.ext[2]) * g.partial_bytes};
  g.footprint = {g.elems[kA] * g.cost[kA].data, g.elems[kB] * g.cost[kB].data,
                 g.elems[kC] * g.partial_bytes};
  g.in_weight_buffer = {s.a == Operand::Weight, s.b == Operand::Weight, false};
  g.compute_density = p.skip_zeros ? s.dens_a * s.dens_b : 1.0;
}

void group_buffers(const GemmLayout& g, std::array<BufferGroup, 2>& groups) {
  for (const bool weight_buffer : {false, true}) {
    std::array<int, 3> ops{};
    int n = 0;
    double need = 0;
    for (int o = 0; o < 3; ++o)
      if (g.in_weight_buffer[o] == weight_buffer)
        ops[static_cast<size_t>(n++)] = o, need += g.footprint[o];
    // Insertion sort: ties keep operand order, as they did under std::sort on so few.
    for (int i = 1; i < n; ++i)
      for (int j = i; j > 0 && g.footprint[ops[j]] < g.footprint[ops[j - 1]]; --j)
        std::swap(ops[j], ops[j - 1]);
    groups[weight_buffer ? 1 : 0] = {ops, n, need};
  }
}

GemmMap map_gemm(const Stage& s, const DesignParams& p) {
  GemmMap g;
  layout_gemm(s, p, g);
  std::array<BufferGroup, 2> groups;
  group_buffers(g, groups);
  static_cast<BufferShares&>(g) = share_buffers(groups, g.footprint, p);
  g.inner = run_loop(g.trips, p.order);
  g.runs = 1;  // tiles / trips[inner], as a product
  for (size_t l = 0; l < 4; ++l)
    if (static_cast<Loop>(l) != g.inner) g.runs *= g.trips[l];
  g.stationary = stationary_operand(g.inner);
  return g;
}

}  // namespace hwt::accel
