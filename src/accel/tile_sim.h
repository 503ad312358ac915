// The detailed fidelity: a tile-by-tile event simulation of each stage. Tiles are issued in
// the design's loop order to the earliest-free lane (or unit); each operand's buffer share is
// an LRU set of tiles, so misses, partial-sum spills and write-backs follow the actual access
// order; transfers queue on one main-memory channel (reads first, write-backs in its idle
// time) and on each PE's buffer port; with double buffering a lane fetches its next tile
// while it computes the current one.
#pragma once

#include <functional>
#include <vector>

#include "accel/activity.h"
#include "accel/design_params.h"
#include "accel/sim_workload.h"

namespace hwt::accel {

Activity detailed_stage(const Stage& s, const DesignParams& p);

// One Activity per stage class (identical stages behave identically, so each class is
// simulated once). `progress(done, total)` is called after each class when given.
std::vector<Activity> detailed_classes(
    const SimWorkload& w, const DesignParams& p,
    const std::function<void(size_t, size_t)>& progress = nullptr);

}  // namespace hwt::accel
