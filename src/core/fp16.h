// IEEE 754 half precision (binary16) to float on the host: exact, subnormals, infinities and
// NaN included (every half is a float).
#pragma once

#include <cstdint>
#include <cstring>

namespace hwt {

inline float f16_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu, bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);  // infinity or NaN
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);  // rebias 15 -> 127
  } else if (mantissa == 0) {
    bits = sign;  // signed zero
  } else {        // subnormal: shift the mantissa up to a leading one, lowering the exponent
    exponent = 113;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --exponent;
    }
    bits = sign | (exponent << 23) | ((mantissa & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

}  // namespace hwt
