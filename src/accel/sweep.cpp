#include "accel/sweep.h"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <exception>
#include <limits>
#include <numeric>
#include <tuple>

#include "accel/design_params.h"
#include "accel/energy_model.h"
#include "accel/fast_model.h"
#include "core/error.h"
#include "core/integer_math.h"
#include "report/csv_writer.h"
#include "report/svg_plot.h"

namespace hwt::accel {
namespace {

double metric(const SweepPoint& p, Metric m) {
  switch (m) {
    case Metric::Latency:
      return p.latency_per_seq();
    case Metric::Energy:
      return p.energy_per_seq();
    case Metric::Area:
      return p.area_mm2;
  }
  return 0;
}

const char* metric_label(Metric m) {
  switch (m) {
    case Metric::Latency:
      return "latency per sequence (s)";
    case Metric::Energy:
      return "energy per sequence (J)";
    case Metric::Area:
      return "area (mm^2)";
  }
  return "";
}

// Where `v` is among a key's choices (the first place: repeated choices tile alike).
size_t position(const std::vector<int64_t>& choices, int64_t v) {
  return static_cast<size_t>(std::find(choices.begin(), choices.end(), v) - choices.begin());
}

// The stage plans of a workload (plan_classes) depend on the design keys batch, tile_b,
// tile_xy and macs_per_lane alone (the space fixes the word format and zero skipping):
// computed once per combination of their choices instead of once per design.
class PlansOfSpace {
 public:
  PlansOfSpace(const DesignSpace& space, const std::map<int64_t, SimWorkload>& workloads,
               const NodeLibrary& node)
      : space_(space) {
    int64_t unused = 0;
    AccelConfig c = space.design(0, &unused);
    for (int64_t macs : space.macs)
      for (int64_t xy : space.tile_xy)
        for (int64_t b : space.tile_b)
          for (int64_t batch : space.batch) {
            c.macs_per_lane = macs;
            c.tile_x = c.tile_y = xy;
            c.tile_b = b;
            plans_.push_back(plan_classes(workloads.at(batch), make_design_params(c, node)));
          }
  }

  // For a design of the space evaluated at `batch`.
  const std::vector<StagePlan>& of(const AccelConfig& c, int64_t batch) const {
    size_t key = position(space_.macs, c.macs_per_lane);
    key = key * space_.tile_xy.size() + position(space_.tile_xy, c.tile_x);
    key = key * space_.tile_b.size() + position(space_.tile_b, c.tile_b);
    key = key * space_.batch.size() + position(space_.batch, batch);
    return plans_[key];
  }

 private:
  const DesignSpace& space_;
  std::vector<std::vector<StagePlan>> plans_;  // in the order of `of`'s key
};

}  // namespace

SweepPoint evaluate_design(const AccelConfig& c, int64_t batch, const SimWorkload& w,
                           const NodeLibrary& node, std::span<const StagePlan> plans) {
  const DesignParams p = make_design_params(c, node);
  const Activity a = fast_total(w, p, plans);
  const Costs costs = price(a, p);
  SweepPoint pt;
  pt.batch = batch;
  pt.cycles = a.cycles;
  pt.latency_s = a.cycles / p.clock_hz;
  pt.dynamic_j = costs.dynamic_j;
  pt.leakage_j = costs.leakage_j;
  pt.area_mm2 = costs.area_mm2;
  return pt;
}

SweepPoint evaluate_design(const AccelConfig& c, int64_t batch, const SimWorkload& w,
                           const HardwareLibrary& lib) {
  return evaluate_design(c, batch, w, node_library(lib, c.technology_nm));
}

std::vector<SweepPoint> run_design_sweep(const DesignSpace& space,
                                         const std::map<int64_t, SimWorkload>& workloads,
                                         const HardwareLibrary& lib,
                                         const std::vector<uint64_t>& indices,
                                         const std::function<void(size_t, size_t)>& progress,
                                         int threads) {
  const NodeLibrary node = node_library(lib, space.base.technology_nm);
  for (int64_t b : space.batch)
    HWT_CHECK(workloads.count(b), "no workload traced for batch {} of space {}", b, space.name);
  const PlansOfSpace plans(space, workloads, node);
  const int team = threads > 0 ? threads : omp_get_max_threads();
  std::vector<SweepPoint> out(indices.size());
  std::exception_ptr error;  // the first design that threw; rethrown outside the threads
  // Blocks of designs between progress reports; the threads take small chunks of each block
  // as they come free, so that a thread the OS has descheduled holds the others up little.
  constexpr size_t kBlock = 16384;
  for (size_t begin = 0; begin < indices.size() && !error; begin += kBlock) {
    const auto end = static_cast<int64_t>(std::min(indices.size(), begin + kBlock));
#pragma omp parallel for num_threads(team) schedule(dynamic, 64)
    for (auto n = static_cast<int64_t>(begin); n < end; ++n) {
      try {
        SweepPoint& pt = out[static_cast<size_t>(n)];
        int64_t batch = 0;
        const AccelConfig c = space.design(indices[static_cast<size_t>(n)], &batch);
        pt = evaluate_design(c, batch, workloads.at(batch), node, plans.of(c, batch));
        pt.index = indices[static_cast<size_t>(n)];
      } catch (...) {
#pragma omp critical(hwt_sweep_error)
        if (!error) error = std::current_exception();
      }
    }
    if (progress && !error && static_cast<size_t>(end) < indices.size())
      progress(static_cast<size_t>(end), indices.size());
  }
  if (error) std::rethrow_exception(error);
  if (progress) progress(indices.size(), indices.size());
  return out;
}

void mark_pareto(std::vector<SweepPoint>& points) {
  // Sorted lexicographically, a point can only be dominated by an earlier one, and only by
  // one already on the front.
  std::vector<size_t> order(points.size());
  std::iota(order.begin(), order.end(), size_t{0});
  auto key = [&](size_t i) {
    const SweepPoint& p = points[i];
    return std::tuple(p.latency_per_seq(), p.energy_per_seq(), p.area_mm2);
  };
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key(a) < key(b); });
  std::vector<size_t> front;
  for (size_t i : order) {
    const SweepPoint& p = points[i];
    const bool dominated = std::any_of(front.begin(), front.end(), [&](size_t f) {
      const SweepPoint& q = points[f];
      return q.energy_per_seq() <= p.energy_per_seq() && q.area_mm2 <= p.area_mm2;
    });
    if (!dominated) front.push_back(i);
  }
  for (SweepPoint& p : points) p.pareto = false;
  for (size_t f : front) points[f].pareto = true;
}

std::string design_sweep_csv(const DesignSpace& space, const std::vector<SweepPoint>& points) {
  CsvWriter csv({"index",
                 "batch",
                 "pes",
                 "mac_lanes",
                 "macs_per_lane",
                 "softmax_units",
                 "tile_b",
                 "tile_xy",
                 "activation_mb",
                 "weight_mb",
                 "mask_mb",
                 "dataflow",
                 "memory",
                 "banks",
                 "ranks",
                 "channels",
                 "cycles",
                 "latency_s",
                 "energy_j",
                 "dynamic_j",
                 "leakage_j",
                 "area_mm2",
                 "latency_per_seq_s",
                 "energy_per_seq_j",
                 "pareto"});
  auto g6 = [](double v) { return fmt::format("{:.6g}", v); };
  for (const SweepPoint& p : points) {
    int64_t batch = 0;
    const AccelConfig c = space.design(p.index, &batch);
    csv.values(p.index, batch, c.pes, c.lanes_per_pe, c.macs_per_lane, c.softmax_per_pe, c.tile_b,
               c.tile_x, c.activation_buffer_mb, c.weight_buffer_mb, c.mask_buffer_mb,
               loop_order_name(c.dataflow), c.memory.type, c.memory.banks, c.memory.ranks,
               c.memory.channels, g6(p.cycles), g6(p.latency_s), g6(p.energy_j()), g6(p.dynamic_j),
               g6(p.leakage_j), g6(p.area_mm2), g6(p.latency_per_seq()), g6(p.energy_per_seq()),
               p.pareto ? 1 : 0);
  }
  return csv.text();
}

std::string pareto_svg(const std::vector<SweepPoint>& points, Metric x, Metric y,
                       const std::string& title, size_t max_points) {
  PlotSeries all{"designs", {}, {}, false, true, "#b0b0b0"};
  const size_t step = std::max<size_t>(1, ceil_div(points.size(), max_points));
  for (size_t i = 0; i < points.size(); i += step) {
    all.x.push_back(metric(points[i], x));
    all.y.push_back(metric(points[i], y));
  }
  // The 2-D front of this pair: sorted by x, keep each point that lowers the best y so far.
  std::vector<size_t> order(points.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::pair(metric(points[a], x), metric(points[a], y)) <
           std::pair(metric(points[b], x), metric(points[b], y));
  });
  PlotSeries front{"Pareto front", {}, {}, true, true, "#d62728"};
  double best = std::numeric_limits<double>::infinity();
  for (size_t i : order) {
    const double vy = metric(points[i], y);
    if (vy < best) {
      best = vy;
      front.x.push_back(metric(points[i], x));
      front.y.push_back(vy);
    }
  }
  PlotSpec spec;
  spec.title = title;
  spec.x_label = metric_label(x);
  spec.y_label = metric_label(y);
  spec.log_x = spec.log_y = true;
  spec.series = {all, front};
  return render_svg(spec);
}

}  // namespace hwt::accel
