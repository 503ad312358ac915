// The FPGA-like U50 design running the tensor-train ATIS workload: finite latency and energy,
// the scaling the model implies (clock, epoch), and the TT model against its dense twin.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "accel/simulator.h"
#include "cli_util.h"
#include "core/paths.h"

namespace hwt::accel {
namespace {

struct U50 {
  std::string path = require_shipped_file("hardware/accel/designs/u50.toml");
  HardwareLibrary lib = design_library(path);
  AccelConfig design = load_accel_config(path, lib);
};

// One training step of a shipped ATIS config at the paper's batch 1, sequence 32, fp32, dense.
SimWorkload atis_step(const std::string& config) {
  return trace_sim_workload(load_run_config(config, {"model.vocab_size=1000"}), 1, 32,
                            TraceMode::Train, Sparsity::dense());
}

TEST(SimFpga, TensorTrainStepIsFiniteAndCheaperThanDense) {
  const U50 u;
  const SimResult tt = simulate(atis_step("tt_atis"), u.design, u.lib, Fidelity::Fast);
  const SimResult dense = simulate(atis_step("dense_atis"), u.design, u.lib, Fidelity::Fast);
  for (const SimResult* r : {&tt, &dense}) {
    EXPECT_TRUE(std::isfinite(r->latency_s) && r->latency_s > 0);
    EXPECT_TRUE(std::isfinite(r->costs.energy_j()) && r->costs.energy_j() > 0);
  }
  EXPECT_LT(tt.parameters * 100, dense.parameters);
  EXPECT_LT(tt.latency_s, dense.latency_s);
  EXPECT_LT(tt.costs.energy_j(), dense.costs.energy_j());
  // The dense model's weights (about 60 MB in fp32) do not fit the 5.8 MiB of BRAM and stream
  // from HBM; the TT cores do.
  EXPECT_LT(tt.total.main_bytes, dense.total.main_bytes);
}

TEST(SimFpga, HalvingTheClockDoublesAComputeBoundStep) {
  U50 u;
  // Main memory and buffer ports far faster than the MACs: every stage waits on compute.
  u.design.memory.bandwidth_gbps = 1e9;
  u.design.buffer_bandwidth_gbps = 1e9;
  const SimWorkload w = atis_step("tt_atis");
  const SimResult fast = simulate(w, u.design, u.lib, Fidelity::Fast);
  u.design.clock_mhz /= 2;
  const SimResult slow = simulate(w, u.design, u.lib, Fidelity::Fast);
  EXPECT_NEAR(slow.latency_s / fast.latency_s, 2.0, 1e-3);
  EXPECT_NEAR(slow.total.cycles, fast.total.cycles, 1e-3 * fast.total.cycles);
  // Energy per operation does not depend on the clock; leakage is paid per second.
  EXPECT_NEAR(slow.costs.dynamic_j, fast.costs.dynamic_j, 1e-9 * fast.costs.dynamic_j);
  EXPECT_NEAR(slow.costs.leakage_j / fast.costs.leakage_j, 2.0, 1e-3);
}

TEST(SimFpga, AnEpochIsItsStepsTimesOneStep) {
  const U50 u;
  const SimResult r = simulate(atis_step("tt_atis"), u.design, u.lib, Fidelity::Fast);
  const EpochCost e = epoch_cost(r, 4478);  // ATIS's training split, one sequence per step
  EXPECT_EQ(e.steps, 4478);
  EXPECT_DOUBLE_EQ(e.latency_s, 4478 * r.latency_s);
  EXPECT_DOUBLE_EQ(e.energy_j, 4478 * r.costs.energy_j());
  SimResult batched = r;
  batched.batch = 32;
  EXPECT_EQ(epoch_cost(batched, 4478).steps, 140);  // the last step is partly filled
}

TEST(SimFpga, CommandPrintsTheEpoch) {
  test::TempDir dir{"sim_fpga"};
  const test::CliResult r = test::run_hwt(
      "sim --config tt_atis --set model.vocab_size=1000 --accel u50 --batch 1 --dense "
      "--epoch-examples 10 --json",
      dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["design"]["fpga"]["dsp_slices"], 5952);
  EXPECT_EQ(j["epoch"]["steps"], 10);
  EXPECT_DOUBLE_EQ(j["epoch"]["latency_s"].get<double>(), 10 * j["latency_s"].get<double>());
  EXPECT_DOUBLE_EQ(j["epoch"]["energy_j"].get<double>(), 10 * j["energy_j"].get<double>());
}

}  // namespace
}  // namespace hwt::accel
