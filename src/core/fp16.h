// IEEE 754 half precision (binary16) <-> float on the host. Half to float is exact, subnormals,
// infinities and NaN included (every half is a float); float to half rounds to nearest even,
// overflows to infinity and keeps NaN quiet.
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

inline uint16_t float_to_f16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return sign | 0x7e00u;   // NaN
  if (a >= 0x477ff000u) return sign | 0x7c00u;  // rounds past 65504: infinity
  if (a < 0x38800000u) {  // below 2^-14: a subnormal half (or zero), a multiple of 2^-24
    const uint32_t mantissa = (a & 0x7fffffu) | 0x800000u;
    const int shift = 126 - static_cast<int>(a >> 23);  // 14 + 24 - 1 - (exponent - 127) + 1
    if (shift > 24) return sign;                        // below half of 2^-24: zero
    const uint32_t kept = mantissa >> shift, rest = mantissa & ((1u << shift) - 1),
                   halfway = 1u << (shift - 1);
    return sign | static_cast<uint16_t>(kept + (rest > halfway || (rest == halfway && (kept & 1))));
  }
  // Normal: rebias 127 -> 15 and round the 13 dropped bits to nearest even (a carry into the
  // exponent is the right result, up to infinity, excluded above).
  const uint32_t r = a - (112u << 23);
  return sign | static_cast<uint16_t>((r + 0xfffu + ((r >> 13) & 1u)) >> 13);
}

}  // namespace hwt
