// The CPU kernels' vectorised element-wise math (backend/cpu/vector_math.h) against the
// activations' definitions evaluated in double precision, at every length around the vector
// width, so that the zero-padded tail is covered as well as the full vectors; under each
// instruction set this CPU has and the build compiled (the portable build: SSSE3 to AVX-512).
#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <cmath>
#include <string>
#include <vector>

#include "backend/cpu/vector_math.h"
#include "test_util.h"

namespace hwt {
namespace {

// The definitions, in double.
double act_ref(Activation a, double x) {
  const double k = std::sqrt(2.0 / M_PI);
  switch (a) {
    case Activation::Gelu:
      return 0.5 * x * std::erfc(-x / std::sqrt(2.0));
    case Activation::GeluTanh:
    case Activation::GeGlu:
      return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
    case Activation::SwiGlu:
      return x / (1.0 + std::exp(-x));
    case Activation::Relu:
      return x > 0 ? x : 0.0;
    case Activation::None:
      return x;
  }
  return x;
}

// The derivative by central differences of the double definition (step 1e-5: truncation error
// about 1e-10 relative, rounding about 1e-11 for these smooth functions).
double grad_ref(Activation a, double x) {
  if (a == Activation::Relu) return x > 0 ? 1.0 : 0.0;
  const double h = 1e-5;
  return (act_ref(a, x + h) - act_ref(a, x - h)) / (2 * h);
}

// Highway's Exp is within 1 ulp and Tanh within 4, erfc's approximation within 1.2e-7
// relative; float rounding of the arguments (x² up to 100 in exp) adds up to about 6e-6
// relative. The absolute part covers what cancels in float: below x = -5 fp32 rounds
// tanh(u) to -1, so the tanh GELU and its derivative (there under 2e-6 in size, times the
// test's gradient 1.5) come out 0, as they do with libm's tanhf.
void expect_near(double got, double want, const std::string& what) {
  EXPECT_LE(std::fabs(got - want), 1e-5 * std::fabs(want) + 3e-6)
      << what << ": " << got << " vs " << want;
}

// Runs body() once under each Highway target this CPU has and vector_math.cpp was compiled
// for (the native build: its one target), then returns to the best one.
template <class Body>
void for_each_target(Body body) {
  const int64_t targets = vec::compiled_targets() & hwy::SupportedTargets();
  ASSERT_NE(targets, 0);
  for (int64_t rest = targets; rest != 0; rest &= rest - 1) {
    const int64_t target = rest & -rest;
    SCOPED_TRACE(hwy::TargetName(target));
    hwy::SetSupportedTargetsForTest(target);
    hwy::GetChosenTarget().DeInit();  // dispatch chooses again
    body();
  }
  hwy::SetSupportedTargetsForTest(0);
  hwy::GetChosenTarget().DeInit();
}

constexpr Activation kActs[] = {Activation::Gelu, Activation::GeluTanh, Activation::SwiGlu,
                                Activation::Relu, Activation::None};

std::vector<float> inputs(int64_t n, uint64_t seed) {
  std::vector<float> x = test::randn(n, seed, 4.0f);
  const float special[] = {0.0f, -10.0f, 10.0f, -1e-3f, 88.5f, -100.0f, 3.0f};
  for (size_t i = 0; i < x.size() && i < std::size(special); ++i) x[i * 7 % x.size()] = special[i];
  return x;
}

TEST(CpuVectorMath, ActivationsAndDerivativesMatchTheirDefinitions) {
  for_each_target([] {
    for (const Activation a : kActs)
      for (int64_t n : {1, 3, 7, 8, 15, 16, 17, 31, 33, 1000}) {
        const std::vector<float> x = inputs(n, static_cast<uint64_t>(n));
        std::vector<float> y(x.size()), dy(x.size(), 1.5f);
        vec::activate(a, x.data(), y.data(), n);
        vec::scale_by_activation_grad(a, x.data(), dy.data(), n);
        for (int64_t i = 0; i < n; ++i) {
          const std::string what = "act " + std::to_string(static_cast<int>(a)) + " n " +
                                   std::to_string(n) + " x " + std::to_string(x[i]);
          expect_near(y[i], act_ref(a, x[i]), what);
          if (std::fabs(x[i]) > 1e-6f || a != Activation::Relu)
            expect_near(dy[i], 1.5 * grad_ref(a, x[i]), what + " grad");
        }
      }
  });
}

// The far left tail of GELU keeps its relative accuracy (1 + erf(x/√2) would cancel to 0).
TEST(CpuVectorMath, GeluKeepsRelativeAccuracyInTheLeftTail) {
  const std::vector<float> x = {-6.0f, -8.0f, -9.5f};
  std::vector<float> y(x.size());
  vec::activate(Activation::Gelu, x.data(), y.data(), 3);
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = act_ref(Activation::Gelu, x[i]);
    EXPECT_LT(y[i], 0.0f);
    EXPECT_LE(std::fabs(y[i] - want), 1e-5 * std::fabs(want)) << x[i];
  }
}

TEST(CpuVectorMath, GatedUnitsAndTheirGradients) {
  for_each_target([] {
    for (const Activation a : {Activation::SwiGlu, Activation::GeGlu})
      for (int64_t n : {1, 5, 16, 19, 344}) {
        const auto gate = inputs(n, 10), up = test::randn(n, 11), g = test::randn(n, 12);
        std::vector<float> y(gate.size()), d_gate(gate.size()), d_up(gate.size());
        vec::glu(a, gate.data(), up.data(), y.data(), n);
        vec::glu_grad(a, gate.data(), up.data(), g.data(), d_gate.data(), d_up.data(), n);
        for (int64_t i = 0; i < n; ++i) {
          const std::string what =
              "glu " + std::to_string(static_cast<int>(a)) + " i " + std::to_string(i);
          const double act = act_ref(a, gate[i]);
          expect_near(y[i], act * up[i], what);
          expect_near(d_up[i], g[i] * act, what + " d_up");
          expect_near(d_gate[i], g[i] * up[i] * grad_ref(a, gate[i]), what + " d_gate");
        }
      }
  });
}

// Bias and activation in one pass: z holds the biased product, y its activation.
TEST(CpuVectorMath, BiasActivateWritesTheBiasedInputAndItsActivation) {
  const int64_t n = 37;
  const auto z0 = test::randn(n, 20), bias = test::randn(n, 21);
  for (const bool with_bias : {true, false}) {
    std::vector<float> z = z0, y(z0.size());
    vec::bias_activate(Activation::Gelu, with_bias ? bias.data() : nullptr, z.data(), y.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      const float want_z = with_bias ? z0[i] + bias[i] : z0[i];
      EXPECT_EQ(z[i], want_z);  // one float addition, as the definition has it
      expect_near(y[i], act_ref(Activation::Gelu, want_z), "bias_activate");
    }
  }
}

// An element's result does not depend on whether it falls in a full vector or the tail:
// bitwise the same in one binary on one machine.
TEST(CpuVectorMath, TheTailComputesAsTheFullVectorsDo) {
  for_each_target([] {
    const auto x = inputs(64, 30);
    for (const Activation a : kActs) {
      std::vector<float> whole(64), part(64);
      vec::activate(a, x.data(), whole.data(), 64);
      for (int64_t start = 0; start < 64; start += 13)
        vec::activate(a, x.data() + start, part.data() + start, std::min<int64_t>(13, 64 - start));
      for (int64_t i = 0; i < 64; ++i) EXPECT_EQ(whole[i], part[i]) << i;
    }
  });
}

TEST(CpuVectorMath, SumOfSquaresInDouble) {
  for (int64_t n : {0, 1, 7, 16, 33, 100003}) {
    const auto x = test::randn(n, static_cast<uint64_t>(n) + 40);
    long double want = 0;
    for (float v : x) want += static_cast<long double>(v) * v;
    // Accumulated in double: the order of the additions moves the sum by at most ~n·2^-53
    // relative (1e-11 at n = 100003).
    EXPECT_NEAR(vec::sum_squares(x.data(), n), static_cast<double>(want),
                1e-10 * static_cast<double>(want) + 1e-30)
        << n;
  }
}

}  // namespace
}  // namespace hwt
