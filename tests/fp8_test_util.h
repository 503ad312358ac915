// Inputs for the fp8 op tests: values that exercise every count of a cast, and random codes of
// finite fp8 values.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/fp8.h"
#include "core/philox.h"
#include "test_util.h"

namespace hwt::test {

// Values over about fifty binades (so that a cast in either format both saturates and flushes
// to zero), with a zero, a NaN and infinities among them (n >= 9).
inline std::vector<float> wide_values(int64_t n, uint64_t seed) {
  std::vector<float> v = randn(n, seed);
  const std::vector<float> e = randn(n, seed + 1);
  for (size_t i = 0; i < v.size(); ++i) v[i] *= std::exp2(std::round(10.0f * e[i]));
  v[1] = 0.0f;
  v[3] = NAN;
  v[5] = INFINITY;
  v[8] = -INFINITY;
  return v;
}

// Random fp8 codes of finite values (no NaN, no E5M2 infinity).
inline std::vector<uint8_t> finite_fp8_codes(int64_t n, Fp8Format f, uint64_t seed) {
  std::vector<uint8_t> v;
  v.reserve(static_cast<size_t>(n));
  for (uint64_t counter = 0; std::ssize(v) < n; ++counter) {
    const Philox4 r = philox4x32(counter, seed);
    for (const uint32_t word : r.v) {
      const auto c = static_cast<uint8_t>(word & 0xffu);
      if (std::ssize(v) < n && std::isfinite(fp8_to_float(c, f))) v.push_back(c);
    }
  }
  return v;
}

}  // namespace hwt::test
