// Rounding of sizes and counts (a >= 0, b > 0).
#pragma once

#include <cstdint>

namespace hwt {

constexpr int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// a rounded up to a multiple of b.
constexpr int64_t round_up(int64_t a, int64_t b) {
  return ceil_div(a, b) * b;
}

}  // namespace hwt
