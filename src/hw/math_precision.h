// Numeric formats a GPU runs matrix products in, as the GPU catalog and the GEMM model name them.
// tf32 is fp32 storage multiplied on tensor cores; fp8 is e4m3/e5m2 storage (Hopper, Ada).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace hwt {

enum class MathPrecision : uint8_t { FP32, TF32, BF16, FP16, FP8 };

inline constexpr std::array<MathPrecision, 5> kAllMathPrecisions = {
    MathPrecision::FP32, MathPrecision::TF32, MathPrecision::BF16, MathPrecision::FP16,
    MathPrecision::FP8};

// Bytes per stored element.
constexpr int precision_bytes(MathPrecision p) {
  switch (p) {
    case MathPrecision::FP32:
    case MathPrecision::TF32:
      return 4;
    case MathPrecision::BF16:
    case MathPrecision::FP16:
      return 2;
    case MathPrecision::FP8:
      return 1;
  }
  return 4;
}

constexpr std::string_view precision_name(MathPrecision p) {
  switch (p) {
    case MathPrecision::FP32:
      return "fp32";
    case MathPrecision::TF32:
      return "tf32";
    case MathPrecision::BF16:
      return "bf16";
    case MathPrecision::FP16:
      return "fp16";
    case MathPrecision::FP8:
      return "fp8";
  }
  return "?";
}

inline std::optional<MathPrecision> parse_precision(std::string_view s) {
  for (MathPrecision p : kAllMathPrecisions)
    if (precision_name(p) == s) return p;
  return std::nullopt;
}

}  // namespace hwt
