// What the fast model knows of a stage class before the design's loop order, lane and PE
// counts, buffer sizes and bandwidths: everything that follows from the stage, the tile sizes,
// the MACs per lane and the word format (size, compression, zero skipping). A sweep prepares it
// once per such tiling of its space; the fast model then evaluates each design in one pass.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "accel/design_params.h"
#include "accel/mapping.h"
#include "accel/sim_workload.h"

namespace hwt::accel {

// A GEMM's layout and what follows from it alone; layout and plan are one object so that the
// plan is filled in place (see layout_gemm).
struct GemmPlan : GemmLayout {
  std::array<BufferGroup, 2> buffers{};
  std::array<double, 3> mask_bytes{};  // each operand's mask moved once
  std::array<double, 3> tile_total{};  // one full tile moved, masks included (C: final)
  double c_total = 0;                  // the whole result moved, masks included
  // Buffer <-> PE traffic: A and B read at every step (unless stationary: once per run, their
  // footprint and mask_bytes), data and masks; C's partial sums written back after every step
  // and read again (spilled) or kept in the lane; the first step's partial sums.
  std::array<double, 2> moving_data{}, moving_mask{};
  double c_spilled = 0, c_in_lane = 0, first_c = 0;
};

// Softmax, layernorm and vector stages: tiles streamed through a unit and back.
struct StreamPlan {
  double tiles = 0;
  double bytes = 0;  // main memory (and ports) each way, masks included
  double act_bytes = 0, mask_bytes = 0;
  double first_in = 0, first_out = 0, first_both = 0;  // the first tile's bytes
};

struct StagePlan {
  StageKind kind = StageKind::Vector;
  // Busy cycles of its units summed over its tiles, edge tiles at their size (GEMM and vector
  // stages: MAC lane cycles; softmax, layernorm: unit cycles).
  double busy = 0;
  GemmPlan gemm;      // GEMM stages
  StreamPlan stream;  // the others
  // GEMMs of a workload with the same trips are walked alike on a design: plan_classes numbers
  // the first kSharedWalks such shapes (-1: walked on its own) and marks each one's first class.
  int shape = -1;
  bool first_of_shape = false;
};
constexpr int kSharedWalks = 32;

// Sets every field of `plan` that the fast model reads, so one plan can be reused for class
// after class without clearing it (clearing it per class cost more than planning a GEMM).
void plan_stage(const Stage& s, const DesignParams& p, StagePlan& plan);
// One per stage class of the workload.
std::vector<StagePlan> plan_classes(const SimWorkload& w, const DesignParams& p);

}  // namespace hwt::accel
