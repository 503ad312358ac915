// Delayed scaling (train/fp8_scaling.h and the fp8_scale_update op it runs) on the CPU backend,
// against amax histories worked by hand; the casts that feed it are the real fp8_cast.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "core/error.h"
#include "train/fp8_scaling.h"

namespace hwt {
namespace {

// A cast of one value into tensor t's fp8 copy, as a step's GEMM operand cast would: it raises
// t's amax to |value|.
void cast(Backend& be, const Fp8DelayedScaling& s, int64_t t, float value) {
  float x = value;
  uint8_t code = 0;
  const DType fp8 = s.format() == Fp8Format::E4M3 ? DType::F8E4M3 : DType::F8E5M2;
  be.fp8_cast({Tensor{&x, Shape{1}, DType::F32},
               {Tensor{&code, Shape{1}, fp8}, {}, s.scale(t), s.amax(t), s.counts(t)}});
}

TEST(Fp8Scaling, MaxOverTheHistoryWindow) {
  CpuBackend be(1);
  Fp8DelayedScaling s(be, {3, AmaxAlgorithm::Max, 0}, Fp8Format::E4M3, {"t"});
  EXPECT_EQ(s.read_scales()[0], 1.0f);
  const float amaxes[] = {2, 4, 1, 1, 1};
  const float expected[] = {224, 112, 112, 112, 448};  // 448 / max of the last three
  for (int step = 0; step < 5; ++step) {
    cast(be, s, 0, amaxes[step] / 2);
    cast(be, s, 0, -amaxes[step]);  // two casts of one tensor: the step's amax is the larger
    s.update();
    EXPECT_EQ(s.read_scales()[0], expected[step]) << "step " << step;
    EXPECT_EQ(*s.scale_inv(0).as<float>(), 1.0f / expected[step]);
    EXPECT_EQ(*s.amax(0).as<float>(), 0.0f) << "the next step starts from no amax";
  }
}

// Hopper's fp8 GEMMs read each scale inverse from a 16-byte boundary: the state puts every one
// on its own, so the GEMMs need no aligned copies of them.
TEST(Fp8Scaling, EachScaleInverseOnItsOwn16ByteBoundary) {
  CpuBackend be(1);
  Fp8DelayedScaling s(be, {3, AmaxAlgorithm::Max, 0}, Fp8Format::E4M3, {"a", "b", "c", "d", "e"});
  for (int64_t t = 0; t < s.tensors(); ++t) {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(s.scale_inv(t).data) % 16, 0u) << t;
    cast(be, s, t, static_cast<float>(t + 1));
  }
  s.update();
  const std::vector<float> scales = s.read_scales();
  for (int64_t t = 0; t < s.tensors(); ++t) {
    EXPECT_FLOAT_EQ(scales[size_t(t)], 448.0f / static_cast<float>(t + 1));
    EXPECT_EQ(*s.scale_inv(t).as<float>(), 1.0f / scales[size_t(t)]) << t;
  }
}

TEST(Fp8Scaling, MostRecentMarginAndFormats) {
  CpuBackend be(1);
  Fp8DelayedScaling e4m3(be, {16, AmaxAlgorithm::MostRecent, 1}, Fp8Format::E4M3, {"t0", "t1"});
  Fp8DelayedScaling e5m2(be, {16, AmaxAlgorithm::MostRecent, 1}, Fp8Format::E5M2, {"t"});
  cast(be, e4m3, 0, 2.0f);
  cast(be, e4m3, 1, 0.25f);
  cast(be, e5m2, 0, 8.0f);
  e4m3.update();
  e5m2.update();
  EXPECT_EQ(e4m3.read_scales(), (std::vector<float>{448.0f / 2 / 2, 448.0f / 0.25f / 2}));
  EXPECT_EQ(e5m2.read_scales()[0], 57344.0f / 8 / 2);  // margin 1 halves the scale
  cast(be, e4m3, 0, 8.0f);
  cast(be, e5m2, 0, 1.0f);
  e4m3.update();
  e5m2.update();
  EXPECT_EQ(e4m3.read_scales()[0], 448.0f / 8 / 2);
  EXPECT_EQ(e4m3.read_scales()[1], 448.0f / 0.25f / 2) << "no cast this step: the scale stays";
  EXPECT_EQ(e5m2.read_scales()[0], 57344.0f / 2);
}

TEST(Fp8Scaling, KeepsTheScaleWithoutEvidence) {
  CpuBackend be(1);
  Fp8DelayedScaling s(be, {2, AmaxAlgorithm::Max, 0}, Fp8Format::E4M3, {"t"});
  float& amax = *s.amax(0).as<float>();
  cast(be, s, 0, 7.0f);
  s.update();
  EXPECT_EQ(s.read_scales()[0], 64.0f);
  amax = NAN;  // a NaN amax keeps the scale while it is in the window (written by hand: the
  s.update();  // casts count non-finite inputs and leave them out of the amax)
  EXPECT_EQ(s.read_scales()[0], 64.0f);
  amax = INFINITY;
  s.update();
  EXPECT_EQ(s.read_scales()[0], 64.0f);
  s.update();  // no cast in a step (amax 0); the infinity is still in the window
  EXPECT_EQ(s.read_scales()[0], 64.0f);
  s.update();  // the window holds only zeros: no evidence, the scale stays
  EXPECT_EQ(s.read_scales()[0], 64.0f);
  cast(be, s, 0, 0.5f);
  s.update();
  EXPECT_EQ(s.read_scales()[0], 896.0f);
  EXPECT_FALSE(s.collapsed());
}

TEST(Fp8Scaling, CastsCountWhatTheyMeet) {
  CpuBackend be(1);
  Fp8DelayedScaling s(be, {4, AmaxAlgorithm::Max, 0}, Fp8Format::E4M3, {"t0", "t1"});
  cast(be, s, 1, 500.0f);  // past 448 at scale 1: saturates
  cast(be, s, 1, 1e-4f);   // below half of E4M3's smallest subnormal: becomes zero
  cast(be, s, 1, NAN);
  const std::vector<Fp8Counts> c = s.read_counts();
  EXPECT_EQ(c[0].overflow + c[0].underflow + c[0].non_finite, 0);
  EXPECT_EQ(c[1].amax, 500.0f);
  EXPECT_EQ(c[1].overflow, 1);
  EXPECT_EQ(c[1].underflow, 1);
  EXPECT_EQ(c[1].non_finite, 1);
}

TEST(Fp8Scaling, ACollapsedScaleIsNamed) {
  CpuBackend be(1);
  Fp8DelayedScaling s(be, {4, AmaxAlgorithm::Max, 0}, Fp8Format::E4M3, {"t0", "t1"});
  cast(be, s, 0, 1.0f);
  cast(be, s, 1, 1e-38f);  // 448 / 1e-38 is past float's range
  s.update();
  const auto why = s.collapsed();
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("fp8 tensor t1: its scale became infinite"), std::string::npos) << *why;
}

// Saved mid-step and restored into a fresh object, the scaling goes on bit for bit as the run that
// was not interrupted.
TEST(Fp8Scaling, StateRestoresExactly) {
  CpuBackend be(1);
  const Fp8ScalingOptions o{5, AmaxAlgorithm::Max, 0};
  Fp8DelayedScaling run(be, o, Fp8Format::E5M2, {"t0", "t1"});
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> amax(0.01f, 50.0f);
  for (int step = 0; step < 7; ++step) {
    cast(be, run, 0, amax(rng));
    cast(be, run, 1, amax(rng));
    run.update();
  }
  cast(be, run, 0, amax(rng));  // a step in progress
  Fp8DelayedScaling resumed(be, o, Fp8Format::E5M2, {"t0", "t1"});
  resumed.restore(run.state());
  EXPECT_EQ(resumed.state(), run.state());
  for (int step = 0; step < 9; ++step) {
    const float a = amax(rng), b = amax(rng);
    for (Fp8DelayedScaling* s : {&run, &resumed}) {
      cast(be, *s, 0, a);
      cast(be, *s, 1, b);
      s->update();
    }
    EXPECT_EQ(resumed.read_scales(), run.read_scales()) << step;
    EXPECT_EQ(*resumed.scale_inv(1).as<float>(), *run.scale_inv(1).as<float>()) << step;
  }
  EXPECT_THROW(resumed.restore(std::vector<float>(3)), InputError);
  EXPECT_THROW(Fp8DelayedScaling(be, {0, AmaxAlgorithm::Max, 0}, Fp8Format::E4M3, {"t0", "t1"}),
               InputError);
  EXPECT_THROW(Fp8DelayedScaling(be, {4, AmaxAlgorithm::Max, -1}, Fp8Format::E4M3, {"t0", "t1"}),
               InputError);
}

}  // namespace
}  // namespace hwt
