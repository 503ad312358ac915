// Finding NaN and infinity in a run's buffers, and the diagnosis a diverged run stops with.
#include "train/numeric_check.h"

#include <gtest/gtest.h>

#include <cmath>

#include "backend/cpu/cpu_backend.h"

namespace hwt {
namespace {

TEST(NumericCheck, NamesTheFirstParameterInBufferOrder) {
  CpuBackend cpu(1);
  ParamStore ps;
  ps.add("norm.bias", Shape{4}, false, Init::Zeros);  // not decayed: laid out after the matrices
  ps.add("w1", Shape{3, 2}, true, Init::Normal, 0.1f);
  ps.add("w2", Shape{5}, true, Init::Ones);
  ps.allocate(cpu, DType::F32);
  ps.initialize(1);
  EXPECT_EQ(first_non_finite(ps, ps.params_flat()), std::nullopt);
  EXPECT_TRUE(weights_finite(ps));
  ps.param(2).as<float>()[4] = INFINITY;
  ps.param(0).as<float>()[0] = NAN;
  EXPECT_EQ(first_non_finite(ps, ps.params_flat()), "w2");
  EXPECT_FALSE(weights_finite(ps));
  ps.zero_grads();
  ps.grad(0).as<float>()[3] = -INFINITY;
  EXPECT_EQ(first_non_finite(ps, ps.grads_flat()), "norm.bias");
}

TEST(NumericCheck, DiagnosisNamesStepRateLossesAndCheckpoint) {
  CpuBackend cpu(1);
  ParamStore ps;
  ps.add("w", Shape{2, 2}, true, Init::Ones);
  ps.allocate(cpu, DType::F32);
  ps.initialize(1);
  ps.grad(0).as<float>()[1] = NAN;
  LossHistory losses;
  for (int step = 1; step <= 7; ++step) losses.add(step, step == 7 ? NAN : 2.5 * step);
  const std::string d = diagnose(
      {7, "the loss is nan", 1e6, losses.str(), "runs/x/checkpoint-step5.safetensors"}, ps);
  EXPECT_EQ(d,
            "training stopped at step 7: the loss is nan; first non-finite gradient: 'w'; first "
            "non-finite weight: none; learning rate 1e+06; last losses: step 3: 7.5, step 4: 10, "
            "step 5: 12.5, step 6: 15, step 7: nan; the last good checkpoint is "
            "runs/x/checkpoint-step5.safetensors");
  EXPECT_NE(diagnose({1, "x", 1, "none logged", ""}, ps).find("no checkpoint was written"),
            std::string::npos);
}

}  // namespace
}  // namespace hwt
