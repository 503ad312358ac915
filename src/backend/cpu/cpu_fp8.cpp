// CpuBackend: the fp8 cast, the reference of the device's: core/fp8.h's quantize_fp8 over the
// tensor, laid out as it is or transposed; and delayed scaling's update of the scales.
#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/fp8_linear.h"
#include "core/fp8.h"
#include "core/fp8_scale_rule.h"

namespace hwt {

void CpuBackend::fp8_cast(const Fp8Cast& a) {
  expect_f32(a.x, "fp8_cast x");
  expect_f32(a.scale, "fp8_cast scale");
  HWT_CHECK(is_fp8(a.out.dtype) && a.out.numel() == a.x.numel(), "fp8_cast {} -> {}", a.x.str(),
            a.out.str());
  HWT_CHECK(a.scale.numel() == 1 && a.amax.defined() == a.counts.defined(),
            "fp8_cast scale {}, amax {}, counts {}", a.scale.str(), a.amax.str(), a.counts.str());
  if (a.amax.defined()) {
    expect_f32(a.amax, "fp8_cast amax");
    expect_i32(a.counts, "fp8_cast counts");
    HWT_CHECK(a.amax.numel() == 1 && a.counts.numel() == 3, "fp8_cast amax {}, counts {}",
              a.amax.str(), a.counts.str());
  }
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
  if (!a.amax.defined()) return;
  float& amax = *a.amax.as<float>();
  amax = std::max(amax, c.amax);
  int32_t* counts = a.counts.as<int32_t>();
  counts[0] += static_cast<int32_t>(c.overflow);
  counts[1] += static_cast<int32_t>(c.underflow);
  counts[2] += static_cast<int32_t>(c.non_finite);
}

void CpuBackend::fp8_scale_update(const Fp8ScaleUpdate& a) {
  for (const Tensor* t : {&a.amax, &a.history, &a.scale, &a.scale_inv})
    expect_f32(*t, "fp8_scale_update");
  const int64_t tensors = a.amax.numel();
  HWT_CHECK(a.history.shape.rank == 2 && a.history.rows() == tensors && a.history.cols() >= 1 &&
                a.scale.numel() == tensors && fp8_scale_inv_stride(a) > 0,
            "fp8_scale_update amax {}, history {}, scale {}, scale_inv {}", a.amax.str(),
            a.history.str(), a.scale.str(), a.scale_inv.str());
  const int64_t len = a.history.cols(), stride = fp8_scale_inv_stride(a);
  const float max_value = fp8_max(a.format);
  for (int64_t t = 0; t < tensors; ++t) {
    float* h = a.history.as<float>() + t * len;
    float& amax = a.amax.as<float>()[t];
    std::copy(h + 1, h + len, h);
    h[len - 1] = amax;
    float window = amax;
    if (a.algorithm == AmaxAlgorithm::Max)
      for (int64_t i = 0; i < len; ++i) window = fp8_amax_join(window, h[i]);
    float& scale = a.scale.as<float>()[t];
    scale = fp8_next_scale(window, scale, max_value, a.margin);
    a.scale_inv.as<float>()[t * stride] = 1.0f / scale;
    amax = 0.0f;
  }
}

}  // namespace hwt
