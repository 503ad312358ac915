#include "accel/mapping.h"

#include <algorithm>
#include <cmath>

namespace hwt::accel {

int64_t stage_tiles(const Stage& s, const DesignParams& p) {
  if (s.kind == StageKind::Vector) return ceil_div(s.elements, p.tile_x * p.tile_y);
  return ceil_div(s.rows, p.tile_x);
}

GemmTiling tile_gemm(const Stage& s, const DesignParams& p) {
  const std::array<int64_t, 4> dim = {s.batch, s.m, s.n, s.k};
  const std::array<int64_t, 4> tile = {p.tile_b, p.tile_x, p.tile_x, p.tile_y};
  GemmTiling t;
  t.tiles = 1;
  for (size_t l = 0; l < 4; ++l) {
    t.full[l] = dim[l] / tile[l];  // one division per loop; the rest follows from it
    t.edge[l] = dim[l] - t.full[l] * tile[l];
    t.trips[l] = t.full[l] + (t.edge[l] > 0 ? 1 : 0);
    t.ext[l] = t.full[l] > 0 ? tile[l] : t.edge[l];
    t.tiles *= t.trips[l];
  }
  return t;
}

GemmMap map_gemm(const Stage& s, const DesignParams& p) {
  return map_gemm(s, p, tile_gemm(s, p));
}

GemmMap map_gemm(const Stage& s, const DesignParams& p, const GemmTiling& tiling) {
  GemmMap g;
  static_cast<GemmTiling&>(g) = tiling;
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
  g.in_weight_buffer = {s.a == Operand::Weight, s.b == Operand::Weight, false};
  g.compute_density = p.skip_zeros ? s.dens_a * s.dens_b : 1.0;
  g.inner = p.order[3];
  for (int i = 3; i >= 0; --i)
    if (g.trips[static_cast<size_t>(p.order[static_cast<size_t>(i)])] > 1) {
      g.inner = p.order[static_cast<size_t>(i)];
      break;
    }
  g.runs = 1;  // tiles / trips[inner], as a product
  for (size_t l = 0; l < 4; ++l)
    if (static_cast<Loop>(l) != g.inner) g.runs *= g.trips[l];
  for (int o : {kA, kB, kC})
    if (!indexes(o, g.inner)) g.stationary = o;

  // Operands that fit together keep all of their data; otherwise smaller ones keep theirs
  // and the rest split what remains equally.
  const std::array<double, 3> full = {g.elems[kA] * g.cost[kA].data, g.elems[kB] * g.cost[kB].data,
                                      g.elems[kC] * g.partial_bytes};
  // Each share and whether the whole operand fits are set together: reading the shares back
  // to compare them stalled on their stores (store-to-load forwarding, seen with perf).
  for (bool weight_buffer : {false, true}) {
    std::array<int, 3> ops{};
    int n = 0;
    double need = 0;
    for (int o = 0; o < 3; ++o)
      if (g.in_weight_buffer[o] == weight_buffer) ops[n++] = o, need += full[o];
    double left = weight_buffer ? p.weight_capacity : p.act_capacity;
    if (need <= left) {
      for (int i = 0; i < n; ++i) {
        g.share[ops[i]] = full[ops[i]];
        g.fits[ops[i]] = true;
      }
      continue;
    }
    std::sort(ops.begin(), ops.begin() + n, [&](int x, int y) { return full[x] < full[y]; });
    for (int i = 0; i < n; ++i) {
      const double share = std::min(full[ops[i]], left / (n - i));
      g.share[ops[i]] = share;
      g.fits[ops[i]] = share >= full[ops[i]];
      left -= share;
    }
  }
  return g;
}

}  // namespace hwt::accel
