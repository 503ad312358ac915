// Design-space sampling, Pareto marking and the sweep's CSV and SVG output.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "accel/sweep.h"
#include "core/paths.h"
#include "sim_test_util.h"

namespace hwt::accel {
namespace {

SweepPoint point(double latency, double energy, double area) {
  SweepPoint p;
  p.batch = 1;
  p.latency_s = latency;
  p.dynamic_j = energy;
  p.area_mm2 = area;
  return p;
}

TEST(SimSweep, ParetoKeepsExactlyTheNonDominated) {
  std::vector<SweepPoint> pts = {point(1, 5, 5), point(2, 2, 5),
                                 point(3, 1, 1), point(2, 3, 6),  // dominated by (2, 2, 5)
                                 point(4, 1, 1),                  // dominated by (3, 1, 1)
                                 point(1, 5, 4)};                 // dominates (1, 5, 5)
  mark_pareto(pts);
  std::vector<bool> got;
  for (const SweepPoint& p : pts) got.push_back(p.pareto);
  EXPECT_EQ(got, (std::vector<bool>{false, true, true, false, false, true}));
}

TEST(SimSweep, ParetoComparesPerSequence) {
  std::vector<SweepPoint> pts = {point(4, 4, 1), point(3, 3, 1)};
  pts[0].batch = 4;  // 1 s and 1 J per sequence: better than the second per sequence
  mark_pareto(pts);
  EXPECT_TRUE(pts[0].pareto);
  EXPECT_FALSE(pts[1].pareto);
}

TEST(SimSweep, SamplesAreDistinctAndInRange) {
  const DesignSpace s = load_design_space(
      require_shipped_file("hardware/accel/spaces/acceltran.toml"), default_hardware_library());
  const std::vector<uint64_t> idx = sample_indices(s, 1000, 3);
  EXPECT_EQ(std::set<uint64_t>(idx.begin(), idx.end()).size(), 1000u);
  EXPECT_LT(*std::max_element(idx.begin(), idx.end()), s.size());
  EXPECT_EQ(sample_indices(s, 1000, 3), idx);  // the seed fixes the sample
}

TEST(SimSweep, SweepWritesOneCsvRowPerDesignAndPlots) {
  const HardwareLibrary& lib = default_hardware_library();
  const DesignSpace s =
      load_design_space(require_shipped_file("hardware/accel/spaces/acceltran.toml"), lib);
  std::map<int64_t, SimWorkload> w;
  for (int64_t b : s.batch)
    w.emplace(b, build_sim_workload(trace_step(testing::small_model(TraceMode::Infer, b)),
                                    TraceMode::Infer, Sparsity{}));
  std::vector<SweepPoint> pts = run_design_sweep(s, w, lib, sample_indices(s, 50, 1));
  mark_pareto(pts);
  ASSERT_EQ(pts.size(), 50u);
  EXPECT_GT(std::count_if(pts.begin(), pts.end(), [](const SweepPoint& p) { return p.pareto; }), 0);
  for (const SweepPoint& p : pts) {
    EXPECT_GT(p.latency_s, 0);
    EXPECT_GT(p.energy_j(), 0);
    EXPECT_GT(p.area_mm2, 0);
  }
  const std::string csv = design_sweep_csv(s, pts);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 51);
  EXPECT_EQ(csv.rfind("index,batch,pes,", 0), 0u);
  const std::string svg = pareto_svg(pts, Metric::Latency, Metric::Energy, "t");
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_NE(svg.find("Pareto front"), std::string::npos);
}

}  // namespace
}  // namespace hwt::accel
