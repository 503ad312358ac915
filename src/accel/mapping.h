// How a stage maps onto a design, shared by the fast and the detailed model so that they
// differ only in how they account time: tile extents and trip counts of a GEMM, which buffer
// each operand lives in, how much of that buffer it gets, and what an element costs to move.
//
// GEMM tiling: a tile is a [tile_b x tile_x x tile_y] block of A times a [tile_b x tile_y x
// tile_x] block of B into a [tile_b x tile_x x tile_x] block of C; loops B (batch), I (rows of
// C), J (columns of C) and K (reduction) run in the design's loop order.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>

#include "accel/design_params.h"
#include "accel/sim_workload.h"
#include "core/integer_math.h"

namespace hwt::accel {

// Bytes per element moved: data (compressed when the design compresses) and its mask bit.
struct ElementCost {
  double data = 0, mask = 0;
  double total() const { return data + mask; }
};
inline ElementCost element_cost(double density, const DesignParams& p) {
  if (!p.compress) return {p.word_bytes, 0};
  return {p.word_bytes * density, 1.0 / 8};
}

enum Operand3 : int { kA = 0, kB = 1, kC = 2 };

// How a GEMM is cut into tiles: it depends on the design's tile sizes alone, so a sweep can
// compute it once per tiling (map_gemm's third argument).
struct GemmTiling {
  std::array<int64_t, 4> ext{};    // tile extent per Loop, clipped to the dimension
  std::array<int64_t, 4> trips{};  // tiles per Loop
  std::array<int64_t, 4> full{};   // full tiles per Loop
  std::array<int64_t, 4> edge{};   // extent of the one partial tile per Loop (0: none)
  int64_t tiles = 0;
};
GemmTiling tile_gemm(const Stage& s, const DesignParams& p);

struct GemmMap : GemmTiling {
  std::array<int64_t, 4> dim{};        // per Loop: batch, m, n, k
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

// Which loops index each operand: A(b,i,k), B(b,k,j), C(b,i,j).
constexpr bool indexes(int operand, Loop l) {
  return l != (operand == kA ? Loop::J : operand == kB ? Loop::I : Loop::K);
}

GemmMap map_gemm(const Stage& s, const DesignParams& p);
// The same with the stage's tiling on `p` already known.
GemmMap map_gemm(const Stage& s, const DesignParams& p, const GemmTiling& tiling);

// Lane cycles of one tile with extents (b, m, n, k): ceil(MACs * density / MACs per lane).
inline int64_t tile_cycles(int64_t b, int64_t m, int64_t n, int64_t k, double density,
                           int64_t macs) {
  const double work = static_cast<double>(b * m) * static_cast<double>(n * k) * density;
  // The epsilon keeps exact products (e.g. 4096 * 0.25) from rounding up.
  return static_cast<int64_t>(std::ceil(work / static_cast<double>(macs) - 1e-9));
}

// Elements of row/vector stages handled per tile: tile_x rows, or tile_x * tile_y elements.
int64_t stage_tiles(const Stage& s, const DesignParams& p);

}  // namespace hwt::accel
