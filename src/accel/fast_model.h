// The fast analytical model: closed forms per stage (tile counts with edge tiles, waves over
// the lanes, loop-order reuse against buffer shares, compute/memory overlap) and a sum over
// the workload's stage classes. Meant for design-space sweeps.
#pragma once

#include <span>
#include <vector>

#include "accel/activity.h"
#include "accel/design_params.h"
#include "accel/fast_plan.h"
#include "accel/sim_workload.h"

namespace hwt::accel {

Activity fast_stage(const Stage& s, const DesignParams& p);

// One Activity per stage class of the workload.
std::vector<Activity> fast_classes(const SimWorkload& w, const DesignParams& p);

// The whole workload: sum over classes times their counts (no per-op detail, no allocation).
// `plans`: plan_classes of the workload on a design that tiles like `p` (tile sizes, MACs per
// lane, word format), or empty to plan each class here.
Activity fast_total(const SimWorkload& w, const DesignParams& p,
                    std::span<const StagePlan> plans = {});

}  // namespace hwt::accel
