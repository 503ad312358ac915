// How a stage maps onto a design, shared by the fast and the detailed model so that they
// differ only in how they account time: tile extents and trip counts of a GEMM, which buffer
// each operand lives in, how much of that buffer it gets, and what an element costs to move.
//
// GEMM tiling: a tile is a [tile_b x tile_x x tile_y] block of A times a [tile_b x tile_y x
// tile_x] block of B into a [tile_b x tile_x x tile_x] block of C; loops B (batch), I (rows of
// C), J (columns of C) and K (reduction) run in the design's loop order.
#pragma once

#include <algorithm>
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

// How a GEMM is cut into tiles: it depends on the design's tile sizes alone.
struct GemmTiling {
  std::array<int64_t, 4> ext{};    // tile extent per Loop, clipped to the dimension
  std::array<int64_t, 4> trips{};  // tiles per Loop
  std::array<int64_t, 4> full{};   // full tiles per Loop
  std::array<int64_t, 4> edge{};   // extent of the one partial tile per Loop (0: none)
  int64_t tiles = 0;
};

// What a GEMM's operands weigh on a design's tiling and word format: it does not depend on the
// loop order, the lanes or the buffers, so the fast model prepares it once per tiling.
struct GemmLayout : GemmTiling {
  std::array<int64_t, 4> dim{};        // per Loop: batch, m, n, k
  std::array<double, 3> elems{};       // A, B, C sizes in elements
  std::array<ElementCost, 3> cost{};   // A, B: stored operands; C: the final (pruned) result
  double partial_bytes = 0;            // per C element while partial sums accumulate (dense)
  std::array<double, 3> tile_bytes{};  // buffer footprint of one full tile (C as partials)
  std::array<double, 3> footprint{};   // buffer bytes of the whole operand (C as partials)
  std::array<bool, 3> in_weight_buffer{};
  double compute_density = 1;  // fraction of MACs not skipped
};
// Fills `g` in place: returned and copied, its arrays were read back right after their scalar
// stores and stalled on them (store-to-load forwarding, seen with perf).
void layout_gemm(const Stage& s, const DesignParams& p, GemmLayout& g);

// Which loops index each operand: A(b,i,k), B(b,k,j), C(b,i,j).
constexpr bool indexes(int operand, Loop l) {
  return l != (operand == kA ? Loop::J : operand == kB ? Loop::I : Loop::K);
}

// The loop a run walks: the innermost of `order` with more than one tile (the innermost of all
// when every loop has one).
inline Loop run_loop(const std::array<int64_t, 4>& trips, const LoopOrder& order) {
  for (int i = 3; i >= 0; --i)
    if (trips[static_cast<size_t>(order[static_cast<size_t>(i)])] > 1)
      return order[static_cast<size_t>(i)];
  return order[3];
}

// The operand a run keeps in its lane, the one its loop does not index (-1: none).
constexpr int stationary_operand(Loop inner) {
  for (int o : {kA, kB, kC})
    if (!indexes(o, inner)) return o;
  return -1;
}

// Operands that fit their buffer together keep all of their data; otherwise smaller ones keep
// theirs and the rest split what remains equally. The grouping and order depend on the
// footprints alone (group_buffers), the shares on the design's capacities too.
struct BufferGroup {
  std::array<int, 3> ops{};  // smallest footprint first
  int n = 0;
  double need = 0;  // footprints summed in operand order
};
// Activation buffer, weight buffer; filled in place (see layout_gemm).
void group_buffers(const GemmLayout& g, std::array<BufferGroup, 2>& groups);
struct BufferShares {
  std::array<double, 3> share{};  // buffer bytes each operand may hold
  std::array<bool, 3> fits{};     // the whole operand fits in its share
};
// Inline: the fast model reads the shares straight from registers.
inline BufferShares share_buffers(const std::array<BufferGroup, 2>& groups,
                                  const std::array<double, 3>& footprint, const DesignParams& p) {
  BufferShares out;
  for (const bool weight_buffer : {false, true}) {
    const BufferGroup& b = groups[weight_buffer ? 1 : 0];
    double left = weight_buffer ? p.weight_capacity : p.act_capacity;
    if (b.need <= left) {
      for (int i = 0; i < b.n; ++i) {
        out.share[b.ops[i]] = footprint[b.ops[i]];
        out.fits[b.ops[i]] = true;
      }
      continue;
    }
    for (int i = 0; i < b.n; ++i) {
      const int o = b.ops[i];
      const double share = std::min(footprint[o], left / (b.n - i));
      out.share[o] = share;
      out.fits[o] = share >= footprint[o];
      left -= share;
    }
  }
  return out;
}

struct GemmMap : GemmLayout, BufferShares {
  Loop inner = Loop::K;  // the loop a run walks
  int64_t runs = 0;      // tiles / trips[inner]
  int stationary = -1;   // kA, kB, kC, or -1
};

GemmMap map_gemm(const Stage& s, const DesignParams& p);

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
