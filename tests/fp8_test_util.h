// Inputs for the fp8 op tests: values that exercise every count of a cast, and random codes of
// finite fp8 values.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "backend/fp8_linear.h"
#include "core/fp8.h"
#include "core/philox.h"
#include "cuda_test_util.h"
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

// Which copies an fp8 cast writes (Fp8Out): as it is, transposed, or both from one pass.
enum class Fp8Layouts { AsIs, Transposed, Both };
inline constexpr Fp8Layouts kAllFp8Layouts[] = {Fp8Layouts::AsIs, Fp8Layouts::Transposed,
                                                Fp8Layouts::Both};
inline bool writes_as_is(Fp8Layouts l) {
  return l != Fp8Layouts::Transposed;
}
inline bool writes_transposed(Fp8Layouts l) {
  return l != Fp8Layouts::AsIs;
}
inline const char* layouts_label(Fp8Layouts l) {
  return l == Fp8Layouts::AsIs ? "as it is" : l == Fp8Layouts::Transposed ? "transposed" : "both";
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

// Host values quantised with `scale` and brought back: what an fp8 GEMM multiplies.
inline std::vector<float> through_fp8(const std::vector<float>& x, float scale, Fp8Format f) {
  std::vector<uint8_t> codes(x.size());
  quantize_fp8(x, scale, f, codes);
  std::vector<float> v(x.size());
  for (size_t i = 0; i < v.size(); ++i) v[i] = fp8_to_float(codes[i], f) / scale;
  return v;
}

inline float max_abs(const std::vector<float>& v) {
  float m = 0.0f;
  for (const float x : v) m = std::max(m, std::fabs(x));
  return m;
}

// A linear layer's fp8 state in a pool (on any backend): x, w and dy scaled by the given scales
// with no figures yet, every product in fp8, and the workspace an [m, k] by [n, k] layer needs.
struct Fp8LinearState {
  DevPool p;
  Fp8Scaled x, w, dy;
  Fp8Linear fp8;

  Fp8LinearState(Backend& be, int64_t m, int64_t n, int64_t k, float sx, float sw, float sdy)
      : p(be, DType::F32), x(scaled(sx)), w(scaled(sw)), dy(scaled(sdy)) {
    const auto bytes = static_cast<int64_t>(fp8_linear_workspace_bytes(m, n, k));
    fp8.x = x;
    fp8.w = w;
    fp8.dy = dy;
    fp8.forward = fp8.input_grad = fp8.weight_grad = true;
    fp8.workspace = p.make(DType::F8E4M3, {bytes});
  }
  Fp8Scaled scaled(float s) {
    return {p.f32({1}, {s}), p.f32({1}, {1.0f / s}), p.f32({1}, {0.0f}), p.i32({3}, {0, 0, 0})};
  }
};

}  // namespace hwt::test
