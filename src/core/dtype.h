// Element types a tensor can hold, with their sizes and names. F8E4M3 and F8E5M2 are the OCP
// 8-bit float formats (core/fp8.h) of fp8 GEMM operands: codes a scale goes with, not values the
// element-wise ops take.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace hwt {

enum class Fp8Format : uint8_t { E4M3, E5M2 };

enum class DType : uint8_t { F32, F16, BF16, I32, F8E4M3, F8E5M2 };

constexpr size_t dtype_size(DType t) {
  switch (t) {
    case DType::F32:
      return 4;
    case DType::F16:
      return 2;
    case DType::BF16:
      return 2;
    case DType::I32:
      return 4;
    case DType::F8E4M3:
    case DType::F8E5M2:
      return 1;
  }
  return 0;
}

constexpr std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::F32:
      return "f32";
    case DType::F16:
      return "f16";
    case DType::BF16:
      return "bf16";
    case DType::I32:
      return "i32";
    case DType::F8E4M3:
      return "f8e4m3";
    case DType::F8E5M2:
      return "f8e5m2";
  }
  return "?";
}

// The float types the element-wise ops compute on.
constexpr bool is_float(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16;
}

constexpr bool is_fp8(DType t) {
  return t == DType::F8E4M3 || t == DType::F8E5M2;
}

// The format of an fp8 dtype.
constexpr Fp8Format fp8_format(DType t) {
  return t == DType::F8E5M2 ? Fp8Format::E5M2 : Fp8Format::E4M3;
}

}  // namespace hwt
