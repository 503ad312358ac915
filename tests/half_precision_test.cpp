// float -> fp16 on the host (core/fp16.h), checked against its exact inverse over every half:
// each half comes back as itself, the midpoint between two neighbours goes to the one with an
// even last bit, and anything past the midpoint goes to the nearer one.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "core/fp16.h"

namespace hwt {
namespace {

bool is_nan_half(uint16_t h) {
  return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0;
}

TEST(HalfPrecision, EveryHalfComesBackAsItself) {
  for (uint32_t h = 0; h < 0x10000u; ++h) {
    const auto half = static_cast<uint16_t>(h);
    if (is_nan_half(half)) continue;
    ASSERT_EQ(float_to_f16(f16_to_float(half)), half) << std::hex << h;
  }
}

// Between each pair of neighbouring positive finite halves (a, a + 1 ulp): the midpoint, and the
// floats just below and above it, in double to keep the midpoint exact.
TEST(HalfPrecision, RoundsToNearestEven) {
  for (uint16_t a = 0; a < 0x7bffu; ++a) {
    const uint16_t b = a + 1;
    const double lo = f16_to_float(a), hi = f16_to_float(b), mid = (lo + hi) / 2;
    const auto mid_f = static_cast<float>(mid);  // exact: a half's midpoint has 12 bits
    ASSERT_EQ(static_cast<double>(mid_f), mid);
    const uint16_t even = (a & 1u) == 0 ? a : b;
    ASSERT_EQ(float_to_f16(mid_f), even) << "midpoint above half " << a;
    ASSERT_EQ(float_to_f16(std::nextafter(mid_f, 0.0f)), a) << "below midpoint above half " << a;
    ASSERT_EQ(float_to_f16(std::nextafter(mid_f, 1e9f)), b) << "past midpoint above half " << a;
    ASSERT_EQ(float_to_f16(-mid_f), static_cast<uint16_t>(even | 0x8000u)) << a;
  }
}

TEST(HalfPrecision, RangeEndsAndSpecials) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(float_to_f16(65504.0f), 0x7bffu);
  EXPECT_EQ(float_to_f16(65519.996f), 0x7bffu);  // below the midpoint to 65536
  EXPECT_EQ(float_to_f16(65520.0f), 0x7c00u);    // the midpoint rounds to even: infinity
  EXPECT_EQ(float_to_f16(1e10f), 0x7c00u);
  EXPECT_EQ(float_to_f16(-inf), 0xfc00u);
  EXPECT_EQ(float_to_f16(std::ldexp(1.0f, -25)), 0x0000u);  // half the smallest: ties to zero
  EXPECT_EQ(float_to_f16(std::nextafter(std::ldexp(1.0f, -25), 1.0f)), 0x0001u);
  EXPECT_EQ(float_to_f16(1e-30f), 0x0000u);
  EXPECT_EQ(float_to_f16(-0.0f), 0x8000u);
  EXPECT_TRUE(is_nan_half(float_to_f16(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(std::isnan(f16_to_float(float_to_f16(-std::numeric_limits<float>::quiet_NaN()))));
}

}  // namespace
}  // namespace hwt
