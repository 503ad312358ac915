// The fast analytical model: closed forms per stage (tile counts with edge tiles, waves over
// the lanes, loop-order reuse against buffer shares, compute/memory overlap) and a sum over
// the workload's stage classes. Meant for design-space sweeps.
#pragma once

#include <span>
#include <vector>

#include "accel/activity.h"
#include "accel/design_params.h"
#include "accel/sim_workload.h"

namespace hwt::accel {

Activity fast_stage(const Stage& s, const DesignParams& p);

// One Activity per stage class of the workload.
std::vector<Activity> fast_classes(const SimWorkload& w, const DesignParams& p);

// Busy cycles of each stage class's units summed over its tiles, edge tiles at their size (GEMM
// and vector stages: MAC lane cycles; softmax, layernorm: unit cycles). The costliest part of a
// stage, and it depends only on a design's tile sizes, MACs per lane and zero skipping: a sweep
// computes it once per such tiling of its space and passes it to fast_total.
std::vector<double> class_busy_cycles(const SimWorkload& w, const DesignParams& p);

// The whole workload: sum over classes times their counts (no per-op detail, no allocation).
// `busy`: class_busy_cycles of a design that tiles like `p`, or empty to compute them here.
Activity fast_total(const SimWorkload& w, const DesignParams& p, std::span<const double> busy = {});

}  // namespace hwt::accel
