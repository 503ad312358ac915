#include "core/fp8.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace hwt {
namespace {

struct Layout {
  int mantissa_bits, exponent_bits, bias;
  uint8_t largest;   // code of the largest finite value
  uint8_t overflow;  // code an unsaturated overflow becomes: NaN (E4M3) or infinity (E5M2)
  uint8_t nan;       // the code a NaN becomes
};

constexpr Layout kE4M3{3, 4, 7, 0x7e, 0x7f, 0x7f};
constexpr Layout kE5M2{2, 5, 15, 0x7b, 0x7c, 0x7e};

const Layout& layout(Fp8Format f) {
  return f == Fp8Format::E4M3 ? kE4M3 : kE5M2;
}

// Rounds q >= 0 to the nearest integer, ties to even, whatever the floating-point environment's
// rounding mode.
double round_half_even(double q) {
  const double down = std::floor(q), rest = q - down;
  if (rest > 0.5 || (rest == 0.5 && std::fmod(down, 2.0) != 0.0)) return down + 1.0;
  return down;
}

}  // namespace

std::string_view fp8_format_name(Fp8Format f) {
  return f == Fp8Format::E4M3 ? "e4m3" : "e5m2";
}

float fp8_max(Fp8Format f) {
  return fp8_to_float(layout(f).largest, f);
}

bool fp8_is_nan(uint8_t code, Fp8Format f) {
  const uint8_t magnitude = code & 0x7fu;
  if (f == Fp8Format::E4M3) return magnitude == 0x7fu;
  return magnitude > 0x7cu;  // exponent all ones, mantissa not zero
}

float fp8_to_float(uint8_t code, Fp8Format f) {
  const Layout& l = layout(f);
  const float sign = (code & 0x80u) != 0 ? -1.0f : 1.0f;
  if (fp8_is_nan(code, f)) return std::nanf("");
  const int exponent = (code >> l.mantissa_bits) & ((1 << l.exponent_bits) - 1);
  const int mantissa = code & ((1 << l.mantissa_bits) - 1);
  if (f == Fp8Format::E5M2 && exponent == 31) return sign * INFINITY;
  const int min_exponent = 1 - l.bias;
  if (exponent == 0)
    return sign * std::ldexp(static_cast<float>(mantissa), min_exponent - l.mantissa_bits);
  return sign * std::ldexp(static_cast<float>(mantissa + (1 << l.mantissa_bits)),
                           exponent - l.bias - l.mantissa_bits);
}

uint8_t float_to_fp8(float x, Fp8Format f, bool saturate) {
  const Layout& l = layout(f);
  const uint8_t sign = std::signbit(x) ? 0x80u : 0x00u;
  if (std::isnan(x)) return sign | l.nan;
  const uint8_t past_largest = sign | (saturate ? l.largest : l.overflow);
  if (std::isinf(x)) return past_largest;
  const double a = std::fabs(static_cast<double>(x));
  if (a == 0.0) return sign;
  // a lies in [2^e, 2^(e+1)); below the smallest normal the spacing stays that of the subnormals.
  int e = 0;
  std::frexp(a, &e);
  const int min_exponent = 1 - l.bias;
  const int quantum = std::max(e - 1, min_exponent) - l.mantissa_bits;
  const double steps = round_half_even(std::ldexp(a, -quantum));  // exact: a has 24 bits
  const double v = std::ldexp(steps, quantum);
  if (v > static_cast<double>(fp8_max(f))) return past_largest;
  if (steps == 0.0) return sign;
  std::frexp(v, &e);
  if (e - 1 < min_exponent) return sign | static_cast<uint8_t>(steps);  // subnormal
  const int biased = e - 1 + l.bias;
  const auto mantissa =
      static_cast<int>(std::ldexp(v, l.mantissa_bits - (e - 1))) - (1 << l.mantissa_bits);
  return sign | static_cast<uint8_t>((biased << l.mantissa_bits) | mantissa);
}

Fp8Counts quantize_fp8(std::span<const float> x, float scale, Fp8Format f, std::span<uint8_t> out) {
  HWT_CHECK(x.size() == out.size(), "quantize_fp8: {} values into {} codes", x.size(), out.size());
  const Layout& l = layout(f);
  Fp8Counts c;
  for (size_t i = 0; i < x.size(); ++i) {
    const float scaled = x[i] * scale;
    out[i] = float_to_fp8(scaled, f, true);
    if (!std::isfinite(x[i])) {
      ++c.non_finite;
      continue;
    }
    c.amax = std::max(c.amax, std::fabs(x[i]));
    if (float_to_fp8(scaled, f, false) == ((out[i] & 0x80u) | l.overflow)) ++c.overflow;
    if (x[i] != 0.0f && (out[i] & 0x7fu) == 0) ++c.underflow;
  }
  return c;
}

}  // namespace hwt
