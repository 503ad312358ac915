// The restructured fast model against a frozen copy of the one it replaced (issue 34): every
// design parameter, every stage's activity and every sweep result must be bitwise equal, since
// `hwt sim` prints them to the last digit. Exact comparison (==) is the point here, no tolerance.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "accel/design_space.h"
#include "accel/energy_model.h"
#include "accel/fast_model.h"
#include "accel/sweep.h"
#include "core/paths.h"
#include "sim_reference_model.h"
#include "sim_test_util.h"

namespace hwt::accel {
namespace {

void expect_same(const Activity& got, const Activity& want, const std::string& where) {
  EXPECT_EQ(got.cycles, want.cycles) << where;
  EXPECT_EQ(got.compute_cycles, want.compute_cycles) << where;
  EXPECT_EQ(got.memory_cycles, want.memory_cycles) << where;
  EXPECT_EQ(got.lane_cycles, want.lane_cycles) << where;
  EXPECT_EQ(got.softmax_cycles, want.softmax_cycles) << where;
  EXPECT_EQ(got.layernorm_cycles, want.layernorm_cycles) << where;
  EXPECT_EQ(got.dispatches, want.dispatches) << where;
  EXPECT_EQ(got.main_bytes, want.main_bytes) << where;
  EXPECT_EQ(got.port_bytes, want.port_bytes) << where;
  EXPECT_EQ(got.act_bytes, want.act_bytes) << where;
  EXPECT_EQ(got.weight_bytes, want.weight_bytes) << where;
  EXPECT_EQ(got.mask_bytes, want.mask_bytes) << where;
}

// A design of the AccelTran space with the keys the space fixes varied too (buffering,
// sparsity support, node, word size, clock, and tile_y apart from tile_x), so that every branch
// of the model is reached.
AccelConfig random_design(const DesignSpace& space, std::mt19937_64& rng) {
  int64_t batch = 0;
  AccelConfig c =
      space.design(std::uniform_int_distribution<uint64_t>(0, space.size() - 1)(rng), &batch);
  auto coin = [&] { return std::bernoulli_distribution(0.5)(rng); };
  c.double_buffering = coin();
  c.skip_zeros = coin();
  c.compress = coin();
  c.power_gating = coin();
  if (coin()) c.tile_y = std::array<int64_t, 4>{4, 8, 32, 64}[rng() % 4];
  c.technology_nm = std::array<int, 4>{7, 14, 22, 45}[rng() % 4];
  c.word_bits = std::array<int, 3>{8, 16, 20}[rng() % 3];
  c.clock_mhz = std::array<double, 3>{200, 700, 1000}[rng() % 3];
  return c;
}

TEST(SimFastEquivalence, MatchesTheFrozenModelBitForBit) {
  const HardwareLibrary& lib = default_hardware_library();
  const DesignSpace space =
      load_design_space(require_shipped_file("hardware/accel/spaces/acceltran.toml"), lib);
  const std::vector<SimWorkload> workloads = {
      testing::small_workload(TraceMode::Train), testing::small_workload(TraceMode::Infer),
      testing::small_workload(TraceMode::Train, Sparsity::dense()),
      build_sim_workload(trace_step(testing::small_model(TraceMode::Train, 3, 20)),
                         TraceMode::Train, Sparsity{})};
  std::mt19937_64 rng(34);
  for (int d = 0; d < 3000; ++d) {
    const AccelConfig c = random_design(space, rng);
    const SimWorkload& w = workloads[static_cast<size_t>(d) % workloads.size()];
    const std::string where = fmt::format("design {}", d);
    const DesignParams p = make_design_params(c, lib);
    const DesignParams want_p = reference::make_design_params(c, lib);
    ASSERT_TRUE(p == want_p) << where;

    const std::vector<Activity> classes = fast_classes(w, p);
    ASSERT_EQ(classes.size(), w.classes.size());
    for (size_t i = 0; i < classes.size(); ++i)
      expect_same(classes[i], reference::fast_stage(w.classes[i], want_p),
                  fmt::format("{}, stage class {}", where, i));

    const Activity total = reference::fast_total(w, want_p);
    const Costs costs = price(total, want_p);
    const SweepPoint got = evaluate_design(c, w.batch, w, lib);
    EXPECT_EQ(got.cycles, total.cycles) << where;
    EXPECT_EQ(got.latency_s, total.cycles / want_p.clock_hz) << where;
    EXPECT_EQ(got.dynamic_j, costs.dynamic_j) << where;
    EXPECT_EQ(got.leakage_j, costs.leakage_j) << where;
    EXPECT_EQ(got.area_mm2, costs.area_mm2) << where;
    if (HasFailure()) return;  // one design's report is enough
  }
}

// The sweep's own path: busy cycles prepared once per tiling, designs split over threads.
TEST(SimFastEquivalence, SweepMatchesTheFrozenModelOnOneAndTwoThreads) {
  const HardwareLibrary& lib = default_hardware_library();
  const DesignSpace space =
      load_design_space(require_shipped_file("hardware/accel/spaces/acceltran.toml"), lib);
  std::map<int64_t, SimWorkload> workloads;
  for (int64_t b : space.batch)
    workloads.emplace(b, build_sim_workload(trace_step(testing::small_model(TraceMode::Train, b)),
                                            TraceMode::Train, Sparsity{}));
  const std::vector<uint64_t> indices = sample_indices(space, 5000, 34);
  for (int threads : {1, 2}) {
    const std::vector<SweepPoint> pts =
        run_design_sweep(space, workloads, lib, indices, nullptr, threads);
    ASSERT_EQ(pts.size(), indices.size());
    for (size_t n = 0; n < indices.size(); ++n) {
      int64_t batch = 0;
      const AccelConfig c = space.design(indices[n], &batch);
      const DesignParams p = reference::make_design_params(c, lib);
      const Activity a = reference::fast_total(workloads.at(batch), p);
      const Costs costs = price(a, p);
      const std::string where = fmt::format("{} threads, design {}", threads, indices[n]);
      EXPECT_EQ(pts[n].index, indices[n]) << where;
      EXPECT_EQ(pts[n].batch, batch) << where;
      EXPECT_EQ(pts[n].cycles, a.cycles) << where;
      EXPECT_EQ(pts[n].latency_s, a.cycles / p.clock_hz) << where;
      EXPECT_EQ(pts[n].dynamic_j, costs.dynamic_j) << where;
      EXPECT_EQ(pts[n].leakage_j, costs.leakage_j) << where;
      EXPECT_EQ(pts[n].area_mm2, costs.area_mm2) << where;
      if (HasFailure()) return;
    }
  }
}

}  // namespace
}  // namespace hwt::accel
