// CpuBackend: the fp8 cast, the reference of the device's: core/fp8.h's quantize_fp8 over the
// tensor, laid out as it is and/or transposed; and delayed scaling's update of the scales.
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
  const Fp8Out& to = a.to;
  const int64_t rows = a.x.rows(), cols = a.x.cols();
  check_fp8_out(to, rows, cols, "fp8_cast");
  const auto n = static_cast<size_t>(a.x.numel());
  // The codes go straight to out; to out_t through a row-major copy where out is not wanted.
  std::vector<uint8_t> row_major(to.out.defined() ? 0 : n);
  const std::span codes =
      to.out.defined() ? std::span(to.out.as<uint8_t>(), n) : std::span(row_major);
  const Fp8Counts c = quantize_fp8(std::span(a.x.as<const float>(), n), *to.scale.as<float>(),
                                   fp8_format(to.dtype()), codes);
  if (to.out_t.defined()) {
    uint8_t* out_t = to.out_t.as<uint8_t>();
#pragma omp parallel for schedule(static)
    for (int64_t j = 0; j < cols; ++j)
      for (int64_t i = 0; i < rows; ++i) out_t[j * rows + i] = codes[size_t(i * cols + j)];
  }
  if (!to.amax.defined()) return;
  float& amax = *to.amax.as<float>();
  amax = std::max(amax, c.amax);
  int32_t* counts = to.counts.as<int32_t>();
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
