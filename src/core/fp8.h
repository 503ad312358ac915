// The two 8-bit float formats of the OCP 8-bit Floating Point Specification (OFP8, rev. 1.0,
// 2023), as Hopper's tensor cores read them, on the host: the exact reference that fp8 kernels
// and scaling are tested against.
//   E4M3: 4 exponent bits (bias 7), 3 mantissa bits; no infinities, S.1111.111 is NaN;
//         largest 448, smallest normal 2^-6, smallest subnormal 2^-9.
//   E5M2: 5 exponent bits (bias 15), 2 mantissa bits; IEEE-like, with infinities and NaN;
//         largest 57344, smallest normal 2^-14, smallest subnormal 2^-16.
// float -> fp8 rounds to nearest even. Saturating (what training uses, and cuda_fp8.h's
// __NV_SATFINITE): a value past the largest, infinities included, becomes the largest with its
// sign. Not saturating (the spec's other mode): it becomes NaN in E4M3 and infinity in E5M2.
// NaN stays NaN either way.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "core/dtype.h"

namespace hwt {

std::string_view fp8_format_name(Fp8Format f);

// Largest finite value: 448 (E4M3) or 57344 (E5M2).
float fp8_max(Fp8Format f);

uint8_t float_to_fp8(float x, Fp8Format f, bool saturate = true);
float fp8_to_float(uint8_t code, Fp8Format f);  // exact: every fp8 value is a float
bool fp8_is_nan(uint8_t code, Fp8Format f);

// What quantising one tensor saw: amax of the unscaled input (the next scale's evidence);
// values that saturated (|x · scale| past the largest finite fp8); non-zero values that became
// zero; NaN or infinite inputs.
struct Fp8Counts {
  float amax = 0.0f;
  int64_t overflow = 0, underflow = 0, non_finite = 0;
};

// out[i] = fp8(x[i] · scale), saturating, as a delayed-scaling GEMM operand is made; the value it
// stands for is fp8_to_float(out[i]) / scale. The CPU reference of the fp8 cast kernels.
Fp8Counts quantize_fp8(std::span<const float> x, float scale, Fp8Format f, std::span<uint8_t> out);

}  // namespace hwt
