// Design-space sweeps with the fast model: evaluate sampled designs, mark the Pareto-optimal
// ones (latency, energy and area per sequence, all minimised), and write CSV and SVG plots.
#pragma once

#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "accel/design_params.h"
#include "accel/design_space.h"
#include "accel/fast_model.h"
#include "accel/sim_workload.h"

namespace hwt::accel {

struct SweepPoint {
  uint64_t index = 0;
  int64_t batch = 0;
  double cycles = 0, latency_s = 0, dynamic_j = 0, leakage_j = 0, area_mm2 = 0;
  bool pareto = false;  // not dominated in (latency, energy, area) per sequence
  double energy_j() const { return dynamic_j + leakage_j; }
  double latency_per_seq() const { return latency_s / static_cast<double>(batch); }
  double energy_per_seq() const { return energy_j() / static_cast<double>(batch); }
};

// One design evaluated with the fast model on the workload traced at its batch; `node` is the
// library at the design's technology node (node_library), shared by the designs of a sweep;
// `plans` is plan_classes of the workload on a design that tiles like `c`, or empty.
SweepPoint evaluate_design(const AccelConfig& c, int64_t batch, const SimWorkload& w,
                           const NodeLibrary& node, std::span<const StagePlan> plans = {});
SweepPoint evaluate_design(const AccelConfig& c, int64_t batch, const SimWorkload& w,
                           const HardwareLibrary& lib);

// Evaluates `indices` of the space on `threads` threads (0: OpenMP's default, every core
// unless OMP_NUM_THREADS says otherwise); `workloads` holds one traced workload per batch
// choice. `progress(done, total)` is called every 16,384 designs and at the end, from the calling
// thread.
// The points are in the order of `indices` and do not depend on the thread count.
std::vector<SweepPoint> run_design_sweep(
    const DesignSpace& space, const std::map<int64_t, SimWorkload>& workloads,
    const HardwareLibrary& lib, const std::vector<uint64_t>& indices,
    const std::function<void(size_t, size_t)>& progress = nullptr, int threads = 0);

void mark_pareto(std::vector<SweepPoint>& points);

// One row per design: its parameters, cycles, latency, energy, area and Pareto membership.
std::string design_sweep_csv(const DesignSpace& space, const std::vector<SweepPoint>& points);

// Scatter of all points (at most `max_points` drawn) with the 2-D Pareto front of the pair.
enum class Metric : uint8_t { Latency, Energy, Area };
std::string pareto_svg(const std::vector<SweepPoint>& points, Metric x, Metric y,
                       const std::string& title, size_t max_points = 4000);

}  // namespace hwt::accel
