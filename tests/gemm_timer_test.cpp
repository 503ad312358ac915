// The GEMM timer: it replays each GEMM of a traced step (dtypes, accumulation, bias, activation)
// through a backend's matmul op, the path training takes. On the CPU reference it runs
// anywhere; on a GPU the misaligned-K slowdown the GEMM model predicts shows up.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "analysis/step_gemms.h"
#include "backend/cpu/cpu_backend.h"
#include "config/run_config.h"
#include "cuda_test_util.h"
#include "measure/gemm_timer.h"
#include "train/run_setup.h"
#include "workload/trace_step.h"

namespace hwt {
namespace {

TEST(GemmTimer, TimesEveryGemmOfATracedStepOnTheCpu) {
  const RunConfig c = load_run_config(
      "", {"model.hidden=32", "model.heads=2", "model.ffn=64", "model.vocab_size=100"});
  const std::vector<StepGemm> gemms = step_gemms(trace_step(step_spec(c, 2, 16)));
  CpuBackend cpu(1);
  GemmTimer timer(cpu);
  std::set<GemmCall> distinct;
  for (const StepGemm& g : gemms) {
    distinct.insert(g);
    const double s = timer.seconds(g);
    EXPECT_TRUE(std::isfinite(s) && s > 0) << role_label(g.role) << " " << shape_label(g.shape);
  }
  EXPECT_EQ(timer.times().size(), distinct.size());
  bool accumulates = false, bias = false;
  for (const GemmCall& g : distinct) accumulates |= g.accumulate, bias |= g.bias;
  EXPECT_TRUE(accumulates && bias);  // weight gradients, biased forward products
}

TEST(GemmTimer, MisalignedKIsSlowerOnTheGpu) {
  HWT_REQUIRE_GPU();
  TrainConfig t;
  t.device = DeviceChoice::Cuda;
  t.precision = Precision::Bf16;
  auto be = make_backend(t);
  GemmTimer timer(*be);
  auto tflops = [&](int64_t k) {
    const GemmCall g = plain_gemm({8192, 4 * k, k}, DType::BF16);
    return g.shape.flops() / timer.seconds(g);
  };
  EXPECT_LT(tflops(4090), 0.8 * tflops(4096));
}

}  // namespace
}  // namespace hwt
