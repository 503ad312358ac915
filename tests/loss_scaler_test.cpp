// Dynamic loss scaling: an overflowing step is skipped (parameters and moments unchanged) and
// halves the scale; clean steps unscale the gradients and grow the scale after `interval`
// steps. Runs on the CPU backend and, when a GPU is present, on the CUDA backend.
#include <gtest/gtest.h>

#include <cmath>

#include "backend/cpu/cpu_backend.h"
#include "cuda_test_util.h"
#include "model/param_store.h"
#include "test_util.h"
#include "train/loss_scaler.h"
#include "train/optimizer.h"

namespace hwt {
namespace {

void check_scaler(Backend& be) {
  ParamStore ps;
  ps.add("w", Shape{40, 25}, true, Init::Normal, 0.5f);
  ps.add("b", Shape{37}, false, Init::Zeros);
  ps.allocate(be, DType::F32);
  ps.initialize(3);
  OptimConfig oc;
  oc.name = OptimizerKind::AdamW;
  Optimizer opt(oc, ps, 1.0);
  LossScaler scaler(be, {1024.0f, 2.0f, 0.5f, 3});
  opt.set_loss_scale(scaler.scale());
  const int64_t n = ps.count();
  std::vector<float> p0(static_cast<size_t>(n)), p1(p0.size());
  be.download(p0.data(), ps.params_flat());

  // Overflow: one infinite gradient.
  std::vector<float> g = test::randn(n, 5);
  g[7] = INFINITY;
  be.upload(ps.grads_flat(), g.data());
  opt.step(1, 1e-2);
  scaler.update(opt.grad_norm_sq());
  be.download(p1.data(), ps.params_flat());
  EXPECT_EQ(p1, p0) << "an overflowing step must not change the parameters";
  EXPECT_EQ(scaler.read_scale(), 512.0f);
  EXPECT_EQ(scaler.read_clean_steps(), 0);

  // Clean steps: gradients scaled by 512 give the same update as unscaled ones.
  const std::vector<float> clean = test::randn(n, 6, 1e-3f);
  std::vector<float> scaled(clean);
  for (float& v : scaled) v *= 512.0f;
  be.upload(ps.grads_flat(), scaled.data());
  opt.step(1, 1e-2);
  scaler.update(opt.grad_norm_sq());
  be.download(p1.data(), ps.params_flat());
  // Reference: the same optimizer on unscaled gradients, on the CPU.
  CpuBackend cpu(1);
  ParamStore ref;
  ref.add("w", Shape{40, 25}, true, Init::Normal, 0.5f);
  ref.add("b", Shape{37}, false, Init::Zeros);
  ref.allocate(cpu, DType::F32);
  ref.initialize(3);
  Optimizer ref_opt(oc, ref, 1.0);
  cpu.upload(ref.grads_flat(), clean.data());
  ref_opt.step(1, 1e-2);
  std::vector<float> want(static_cast<size_t>(n));
  cpu.download(want.data(), ref.params_flat());
  EXPECT_LT(test::rel_err(p1, want), 1e-6);
  EXPECT_EQ(scaler.read_clean_steps(), 1);
  for (int s = 0; s < 2; ++s) {
    be.upload(ps.grads_flat(), scaled.data());
    opt.step(2 + s, 1e-2);
    scaler.update(opt.grad_norm_sq());
  }
  EXPECT_EQ(scaler.read_scale(), 1024.0f) << "three clean steps double the scale";
  EXPECT_EQ(scaler.read_clean_steps(), 0);
}

TEST(LossScaler, OverflowSkipsStepAndHalvesScaleCpu) {
  CpuBackend cpu(2);
  check_scaler(cpu);
}

TEST(LossScaler, OverflowSkipsStepAndHalvesScaleCuda) {
  HWT_REQUIRE_GPU();
  check_scaler(test::gpu_ref());
}

// fp16 training stops once the scale falls below 1 (train/loss_scaler.h): from 1024, ten
// overflowing steps in a row reach 1, the eleventh collapses it; a clean step in between does
// not reset the scale.
TEST(LossScaler, CollapsesAfterOverflowsInARow) {
  CpuBackend cpu(1);
  LossScaler scaler(cpu, {1024.0f, 2.0f, 0.5f, 3});
  DeviceBuffer norm(cpu, sizeof(float));
  const Tensor norm_sq = norm.tensor(DType::F32, Shape{1});
  auto step = [&](float value) {
    cpu.upload(norm_sq, &value);
    scaler.update(norm_sq);
  };
  for (int i = 0; i < 10; ++i) {
    EXPECT_FALSE(scaler.collapsed()) << i;
    step(i == 4 ? 1.0f : NAN);  // one clean step among the overflows
  }
  EXPECT_EQ(scaler.read_scale(), 2.0f);
  step(NAN);
  EXPECT_FALSE(scaler.collapsed()) << "a scale of exactly 1 is plain fp16 training";
  step(INFINITY);
  EXPECT_TRUE(scaler.collapsed());
}

TEST(LossScaler, RejectsBadConfig) {
  CpuBackend cpu(1);
  EXPECT_THROW(LossScaler(cpu, {0.0f, 2.0f, 0.5f, 10}), InputError);
  EXPECT_THROW(LossScaler(cpu, {1.0f, 2.0f, 1.5f, 10}), InputError);
}

}  // namespace
}  // namespace hwt
