// CpuBackend: the fp8 cast, the reference of the device's: core/fp8.h's quantize_fp8 over the
// tensor, laid out as it is or transposed.
#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "core/fp8.h"

namespace hwt {

void CpuBackend::fp8_cast(const Fp8Cast& a) {
  expect_f32(a.x, "fp8_cast x");
  expect_f32(a.scale, "fp8_cast scale");
  expect_f32(a.amax, "fp8_cast amax");
  expect_i32(a.counts, "fp8_cast counts");
  HWT_CHECK(is_fp8(a.out.dtype) && a.out.numel() == a.x.numel(), "fp8_cast {} -> {}", a.x.str(),
            a.out.str());
  HWT_CHECK(a.scale.numel() == 1 && a.amax.numel() == 1 && a.counts.numel() == 3,
            "fp8_cast scale {}, amax {}, counts {}", a.scale.str(), a.amax.str(), a.counts.str());
  const int64_t rows = a.x.rows(), cols = a.x.cols();
  if (a.transpose)
    HWT_CHECK(a.out.rows() == cols && a.out.cols() == rows, "fp8_cast transposes {} into {}",
              a.x.str(), a.out.str());
  const auto n = static_cast<size_t>(a.x.numel());
  uint8_t* out = a.out.as<uint8_t>();
  // Laid out as x, the codes go straight to out; transposed, through a row-major copy.
  std::vector<uint8_t> row_major(a.transpose ? n : 0);
  const Fp8Counts c =
      quantize_fp8(std::span(a.x.as<const float>(), n), *a.scale.as<float>(),
                   fp8_format(a.out.dtype), a.transpose ? std::span(row_major) : std::span(out, n));
  if (a.transpose) {
#pragma omp parallel for schedule(static)
    for (int64_t j = 0; j < cols; ++j)
      for (int64_t i = 0; i < rows; ++i) out[j * rows + i] = row_major[size_t(i * cols + j)];
  }
  float& amax = *a.amax.as<float>();
  amax = std::max(amax, c.amax);
  int32_t* counts = a.counts.as<int32_t>();
  counts[0] += static_cast<int32_t>(c.overflow);
  counts[1] += static_cast<int32_t>(c.underflow);
  counts[2] += static_cast<int32_t>(c.non_finite);
}

}  // namespace hwt
