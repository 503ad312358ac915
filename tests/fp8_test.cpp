// The fp8 formats (core/fp8.h) against the OCP 8-bit float specification's values and against a
// brute-force nearest-value search.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "core/fp8.h"

namespace hwt {
namespace {

constexpr Fp8Format kFormats[] = {Fp8Format::E4M3, Fp8Format::E5M2};

TEST(Fp8, SpecificationValues) {
  using F = Fp8Format;
  EXPECT_EQ(fp8_max(F::E4M3), 448.0f);
  EXPECT_EQ(fp8_max(F::E5M2), 57344.0f);
  EXPECT_EQ(fp8_to_float(0x7e, F::E4M3), 448.0f);
  EXPECT_EQ(fp8_to_float(0x01, F::E4M3), std::ldexp(1.0f, -9));  // smallest subnormal
  EXPECT_EQ(fp8_to_float(0x08, F::E4M3), std::ldexp(1.0f, -6));  // smallest normal
  EXPECT_EQ(fp8_to_float(0x38, F::E4M3), 1.0f);
  EXPECT_EQ(fp8_to_float(0x7b, F::E5M2), 57344.0f);
  EXPECT_EQ(fp8_to_float(0x01, F::E5M2), std::ldexp(1.0f, -16));
  EXPECT_EQ(fp8_to_float(0x04, F::E5M2), std::ldexp(1.0f, -14));
  EXPECT_EQ(fp8_to_float(0x3c, F::E5M2), 1.0f);
  EXPECT_EQ(fp8_to_float(0x7c, F::E5M2), INFINITY);
  EXPECT_EQ(fp8_to_float(0xfc, F::E5M2), -INFINITY);
  EXPECT_EQ(fp8_to_float(0xc0, F::E4M3), -2.0f);
  EXPECT_TRUE(std::signbit(fp8_to_float(0x80, F::E4M3)));  // negative zero
  // E4M3 has one NaN per sign and no infinity; E5M2 three NaNs per sign.
  int nans[2] = {0, 0};
  for (int c = 0; c < 256; ++c)
    for (int f = 0; f < 2; ++f)
      if (fp8_is_nan(static_cast<uint8_t>(c), kFormats[f])) {
        ++nans[f];
        EXPECT_TRUE(std::isnan(fp8_to_float(static_cast<uint8_t>(c), kFormats[f])));
      }
  EXPECT_EQ(nans[0], 2);
  EXPECT_EQ(nans[1], 6);
}

TEST(Fp8, EveryCodeComesBackAsItself) {
  for (const Fp8Format f : kFormats)
    for (int c = 0; c < 256; ++c) {
      const auto code = static_cast<uint8_t>(c);
      if (fp8_is_nan(code, f)) continue;
      const float v = fp8_to_float(code, f);
      if (std::isinf(v)) {
        EXPECT_EQ(float_to_fp8(v, f, false), code);
        continue;
      }
      EXPECT_EQ(float_to_fp8(v, f, true), code) << fp8_format_name(f) << " " << c;
      EXPECT_EQ(float_to_fp8(v, f, false), code) << fp8_format_name(f) << " " << c;
    }
}

// Between each pair of neighbouring non-negative finite values: the midpoint goes to the code
// with an even last bit, the floats just beside it to the nearer one.
TEST(Fp8, RoundsToNearestEven) {
  for (const Fp8Format f : kFormats) {
    const auto largest = float_to_fp8(fp8_max(f), f);
    for (uint8_t a = 0; a < largest; ++a) {
      const uint8_t b = a + 1;
      const float lo = fp8_to_float(a, f), hi = fp8_to_float(b, f);
      const float mid = (lo + hi) / 2;  // exact: fp8 values have at most 4 significant bits
      const uint8_t even = (a & 1u) == 0 ? a : b;
      ASSERT_EQ(float_to_fp8(mid, f), even) << fp8_format_name(f) << " above " << int{a};
      ASSERT_EQ(float_to_fp8(std::nextafter(mid, 0.0f), f), a) << int{a};
      ASSERT_EQ(float_to_fp8(std::nextafter(mid, INFINITY), f), b) << int{a};
      ASSERT_EQ(float_to_fp8(-mid, f), even | 0x80u) << int{a};
    }
  }
}

// Any float against the nearest of all 256 codes found by search (ties to the even code), over
// magnitudes from far below the smallest subnormal to far past the largest value.
TEST(Fp8, MatchesANearestValueSearch) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> log2_magnitude(-24.0f, 20.0f);
  for (const Fp8Format f : kFormats) {
    for (int i = 0; i < 20000; ++i) {
      const float x = (i % 2 ? -1.0f : 1.0f) * std::exp2(log2_magnitude(rng));
      const double target = std::fmin(std::fabs(static_cast<double>(x)), fp8_max(f));
      int best = -1;
      double best_distance = INFINITY;
      for (int c = 0; c < 128; ++c) {
        const float v = fp8_to_float(static_cast<uint8_t>(c), f);
        if (!std::isfinite(v)) continue;
        const double d = std::fabs(static_cast<double>(v) - target);
        if (d < best_distance || (d == best_distance && (c & 1) == 0)) best = c, best_distance = d;
      }
      const uint8_t expected = static_cast<uint8_t>(best) | (x < 0 ? 0x80u : 0x00u);
      ASSERT_EQ(float_to_fp8(x, f, true), expected) << fp8_format_name(f) << " " << x;
    }
  }
}

TEST(Fp8, SaturatesOrOverflowsPastTheLargest) {
  using F = Fp8Format;
  // E4M3: 464 is halfway from 448 (mantissa 110, even) to 480, which it lacks: it stays 448.
  EXPECT_EQ(float_to_fp8(464.0f, F::E4M3, false), 0x7e);
  EXPECT_EQ(float_to_fp8(465.0f, F::E4M3, true), 0x7e);
  EXPECT_EQ(float_to_fp8(465.0f, F::E4M3, false), 0x7f);  // NaN: E4M3 has no infinity
  EXPECT_EQ(float_to_fp8(-1e30f, F::E4M3, true), 0xfe);
  EXPECT_EQ(float_to_fp8(INFINITY, F::E4M3, true), 0x7e);
  EXPECT_EQ(float_to_fp8(-INFINITY, F::E4M3, false), 0xff);
  // E5M2: 61440 is halfway from 57344 (mantissa 11, odd) to 65536: it rounds past the largest.
  EXPECT_EQ(float_to_fp8(61439.0f, F::E5M2, false), 0x7b);
  EXPECT_EQ(float_to_fp8(61440.0f, F::E5M2, false), 0x7c);  // infinity
  EXPECT_EQ(float_to_fp8(61440.0f, F::E5M2, true), 0x7b);
  EXPECT_EQ(float_to_fp8(-INFINITY, F::E5M2, false), 0xfc);
  EXPECT_EQ(float_to_fp8(INFINITY, F::E5M2, true), 0x7b);
  for (const Fp8Format f : kFormats)
    for (const bool saturate : {true, false}) {
      EXPECT_TRUE(fp8_is_nan(float_to_fp8(NAN, f, saturate), f));
      EXPECT_TRUE(fp8_is_nan(float_to_fp8(-NAN, f, saturate), f));
    }
}

TEST(Fp8, UnderflowsToZeroBelowHalfTheSmallestSubnormal) {
  for (const Fp8Format f : kFormats) {
    const float smallest = fp8_to_float(0x01, f);
    EXPECT_EQ(float_to_fp8(smallest / 2, f), 0x00);  // tie: to the even code, zero
    EXPECT_EQ(float_to_fp8(std::nextafter(smallest / 2, 1.0f), f), 0x01);
    EXPECT_EQ(float_to_fp8(-smallest / 4, f), 0x80);
    EXPECT_EQ(float_to_fp8(std::numeric_limits<float>::denorm_min(), f), 0x00);
  }
}

TEST(Fp8, QuantizeCountsWhatTheCastLost) {
  const std::vector<float> x = {0.0f, 1.0f, -500.0f, 1e-4f, NAN, INFINITY, 3.0f};
  std::vector<uint8_t> q(x.size());
  const Fp8Counts c = quantize_fp8(x, 1.0f, Fp8Format::E4M3, q);
  EXPECT_EQ(c.amax, 500.0f);  // of the finite inputs
  EXPECT_EQ(c.overflow, 1);   // -500
  EXPECT_EQ(c.underflow, 1);  // 1e-4 is below 2^-10, half the smallest subnormal
  EXPECT_EQ(c.non_finite, 2);
  EXPECT_EQ(q[0], 0x00);
  EXPECT_EQ(q[2], 0xfe);  // saturated to -448
  EXPECT_TRUE(fp8_is_nan(q[4], Fp8Format::E4M3));
  EXPECT_EQ(q[5], 0x7e);

  // The scale moves values into the format's range: 3 · 100 = 300 lies between 288 and 320 and
  // is nearer 288, which stands for 2.88.
  std::vector<uint8_t> s(1);
  const Fp8Counts scaled = quantize_fp8(std::vector<float>{3.0f}, 100.0f, Fp8Format::E4M3, s);
  EXPECT_EQ(fp8_to_float(s[0], Fp8Format::E4M3) / 100.0f, 2.88f);
  EXPECT_EQ(scaled.amax, 3.0f);
  EXPECT_EQ(scaled.overflow + scaled.underflow + scaled.non_finite, 0);
}

}  // namespace
}  // namespace hwt
