// The numeric format a run trains in and a GPU multiplies matrices in: one type for the training
// config (train.precision), the GPU catalog's peak rates and the GEMM model. tf32 is fp32
// storage multiplied on tensor cores; fp8 (e4m3/e5m2 storage on Hopper and Ada) is analysed by
// the shape advisor but not trained.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "core/dtype.h"

namespace hwt {

enum class Precision : uint8_t { Fp32, Tf32, Bf16, Fp16, Fp8 };

inline constexpr std::array<Precision, 5> kAllPrecisions = {
    Precision::Fp32, Precision::Tf32, Precision::Bf16, Precision::Fp16, Precision::Fp8};

// Bytes per stored GEMM operand element.
constexpr int precision_bytes(Precision p) {
  switch (p) {
    case Precision::Fp32:
    case Precision::Tf32:
      return 4;
    case Precision::Bf16:
    case Precision::Fp16:
      return 2;
    case Precision::Fp8:
      return 1;
  }
  return 4;
}

constexpr std::string_view precision_name(Precision p) {
  switch (p) {
    case Precision::Fp32:
      return "fp32";
    case Precision::Tf32:
      return "tf32";
    case Precision::Bf16:
      return "bf16";
    case Precision::Fp16:
      return "fp16";
    case Precision::Fp8:
      return "fp8";
  }
  return "?";
}

inline std::optional<Precision> parse_precision(std::string_view s) {
  for (Precision p : kAllPrecisions)
    if (precision_name(p) == s) return p;
  return std::nullopt;
}

// The dtype activations and the weight copies layers read are stored in. fp8 recipes keep
// activations in bf16 and cast GEMM inputs to fp8 (NVIDIA Transformer Engine), so fp8 is bf16
// here.
constexpr DType activation_dtype(Precision p) {
  switch (p) {
    case Precision::Fp32:
    case Precision::Tf32:
      return DType::F32;
    case Precision::Bf16:
    case Precision::Fp8:
      return DType::BF16;
    case Precision::Fp16:
      return DType::F16;
  }
  return DType::F32;
}

}  // namespace hwt
