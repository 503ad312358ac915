// The fast analytical model: closed forms per stage (tile counts with edge tiles, waves over
// the lanes, loop-order reuse against buffer shares, compute/memory overlap) and a sum over
// the workload's stage classes. Meant for design-space sweeps.
#pragma once

#include <span>
#include <vector>

#include "accel/activity.h"
#include "accel/design_params.h"
#include "accel/mapping.h"
#include "accel/sim_workload.h"

namespace hwt::accel {

Activity fast_stage(const Stage& s, const DesignParams& p);

// One Activity per stage class of the workload.
std::vector<Activity> fast_classes(const SimWorkload& w, const DesignParams& p);

// What a stage class costs on a design's tiling alone: the busy cycles of its units summed over
// its tiles, edge tiles at their size (GEMM and vector stages: MAC lane cycles; softmax,
// layernorm: unit cycles), and a GEMM's tiles. They depend only on the tile sizes, MACs per lane
// and zero skipping, and are a large part of a stage's cost: a sweep computes them once per
// such tiling of its space and passes them to fast_total.
struct StageTiling {
  double busy = 0;
  GemmTiling gemm;  // GEMM stages only
};
std::vector<StageTiling> class_tilings(const SimWorkload& w, const DesignParams& p);

// The whole workload: sum over classes times their counts (no per-op detail, no allocation).
// `tilings`: class_tilings of a design that tiles like `p`, or empty to compute them here.
Activity fast_total(const SimWorkload& w, const DesignParams& p,
                    std::span<const StageTiling> tilings = {});

}  // namespace hwt::accel
