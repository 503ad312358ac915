// Properties any sensible accelerator model keeps, checked on traced workloads in both
// fidelities.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "accel/fast_model.h"
#include "accel/simulator.h"
#include "accel/tile_sim.h"
#include "sim_test_util.h"

namespace hwt::accel {
namespace {

using testing::params;
using testing::small_workload;

AccelConfig edge_like() {
  AccelConfig c;
  c.pes = 8;
  c.lanes_per_pe = 4;
  c.macs_per_lane = 16;
  c.softmax_per_pe = 2;
  c.activation_buffer_mb = 4;
  c.weight_buffer_mb = 8;
  c.mask_buffer_mb = 1;
  return c;
}

const HardwareLibrary& lib() {
  return default_hardware_library();
}

TEST(SimInvariants, MorePesNeverAddComputeCycles) {
  const SimWorkload w = small_workload();
  for (int64_t lanes : {1, 4, 16}) {
    double prev_fast = INFINITY, prev_detailed = INFINITY;
    for (int64_t pes : {1, 2, 4, 8, 16, 64}) {
      AccelConfig c = edge_like();
      c.pes = pes;
      c.lanes_per_pe = lanes;
      double fast = 0, detailed = 0;
      for (size_t i = 0; i < w.classes.size(); ++i) {
        fast += w.class_count[i] * fast_stage(w.classes[i], params(c)).compute_cycles;
        detailed += w.class_count[i] * detailed_stage(w.classes[i], params(c)).compute_cycles;
      }
      EXPECT_LE(fast, prev_fast) << pes << " PEs x " << lanes << " lanes";
      EXPECT_LE(detailed, prev_detailed) << pes << " PEs x " << lanes << " lanes";
      prev_fast = fast;
      prev_detailed = detailed;
    }
  }
}

TEST(SimInvariants, HalfSparsityNeverCostsMoreThanDense) {
  const SimWorkload dense = small_workload(TraceMode::Train, Sparsity::dense());
  const SimWorkload sparse = small_workload(TraceMode::Train, Sparsity{0.5, 0.5, 0.5});
  for (bool skip : {false, true})
    for (bool compress : {false, true})
      for (double act_mb : {0.01, 4.0}) {
        AccelConfig c = edge_like();
        c.skip_zeros = skip;
        c.compress = compress;
        c.activation_buffer_mb = act_mb;
        for (Fidelity f : {Fidelity::Fast, Fidelity::Detailed}) {
          const SimResult d = simulate(dense, c, lib(), f);
          const SimResult s = simulate(sparse, c, lib(), f);
          EXPECT_LE(s.total.cycles, d.total.cycles) << skip << compress << act_mb;
          EXPECT_LE(s.costs.energy_j(), d.costs.energy_j()) << skip << compress << act_mb;
          EXPECT_LE(s.total.main_bytes, d.total.main_bytes);
        }
      }
}

TEST(SimInvariants, BufferTooSmallForATileRaisesMainMemoryTraffic) {
  Stage s;
  s.kind = StageKind::Gemm;
  s.m = 256;
  s.n = 256;
  s.k = 256;
  s.a = s.b = Operand::Activation;  // both operands in the activation buffer
  AccelConfig big = edge_like();
  AccelConfig tiny = big;
  tiny.activation_buffer_mb = 512.0 / (1 << 20);  // 512 B: less than one 16x16 tile
  for (auto model : {&fast_stage, &detailed_stage}) {
    const Activity roomy = model(s, params(big));
    const Activity cramped = model(s, params(tiny));
    EXPECT_GT(cramped.main_bytes, roomy.main_bytes);
    EXPECT_GE(cramped.cycles, roomy.cycles);
  }
}

TEST(SimInvariants, EnergyIsTheSumOverModulesAndOps) {
  const SimWorkload w = small_workload();
  for (Fidelity f : {Fidelity::Fast, Fidelity::Detailed}) {
    const SimResult r = simulate(w, edge_like(), lib(), f);
    double modules = 0, area = 0;
    for (const ModuleCost& m : r.costs.modules)
      modules += m.dynamic_j + m.leakage_j, area += m.area_mm2;
    EXPECT_NEAR(modules, r.costs.energy_j(), 1e-12 * r.costs.energy_j());
    EXPECT_NEAR(area, r.costs.area_mm2, 1e-12 * area);
    const double ops = std::accumulate(r.ops.begin(), r.ops.end(), 0.0,
                                       [](double e, const OpResult& o) { return e + o.energy_j; });
    EXPECT_NEAR(ops, r.costs.energy_j(), 1e-9 * r.costs.energy_j());
    EXPECT_GT(r.costs.dynamic_j, 0);
    EXPECT_GT(r.costs.leakage_j, 0);
  }
}

TEST(SimInvariants, TrainingCostsMoreThanInference) {
  const SimWorkload train = small_workload(TraceMode::Train);
  const SimWorkload infer = small_workload(TraceMode::Infer);
  for (Fidelity f : {Fidelity::Fast, Fidelity::Detailed}) {
    const SimResult t = simulate(train, edge_like(), lib(), f);
    const SimResult i = simulate(infer, edge_like(), lib(), f);
    EXPECT_GT(t.total.cycles, i.total.cycles);
    EXPECT_GT(t.costs.energy_j(), i.costs.energy_j());
    EXPECT_GT(t.total.lane_cycles, 2 * i.total.lane_cycles);
  }
}

TEST(SimInvariants, UtilisationIsAFraction) {
  const SimResult r = simulate(small_workload(), edge_like(), lib(), Fidelity::Detailed);
  for (const ModuleCost& m : r.costs.modules) {
    EXPECT_GE(m.utilisation, 0) << m.name;
    EXPECT_LE(m.utilisation, 1 + 1e-9) << m.name;
  }
}

TEST(SimInvariants, LoopOrderChangesMainMemoryTrafficOnlyWhenOperandsDoNotFit) {
  Stage s;
  s.kind = StageKind::Gemm;
  s.m = 512;
  s.n = 512;
  s.k = 512;
  AccelConfig c = edge_like();
  c.dataflow = parse_loop_order("bijk");
  const double roomy = fast_stage(s, params(c)).main_bytes;
  c.dataflow = parse_loop_order("kjib");
  EXPECT_DOUBLE_EQ(fast_stage(s, params(c)).main_bytes, roomy);
  c.activation_buffer_mb = c.weight_buffer_mb = 0.05;
  const double a = fast_stage(s, params(c)).main_bytes;
  c.dataflow = parse_loop_order("bijk");
  const double b = fast_stage(s, params(c)).main_bytes;
  EXPECT_NE(a, b);
  EXPECT_GT(std::max(a, b), roomy);
}

}  // namespace
}  // namespace hwt::accel
