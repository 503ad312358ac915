// CpuBackend: softmax cross-entropy (loss and gradient in one pass) and row argmax.
#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/fp8_linear.h"

namespace hwt {

void CpuBackend::cross_entropy(const CrossEntropy& a) {
  expect_f32(a.logits, "logits");
  expect_i32(a.targets, "targets");
  expect_f32(a.losses, "losses");
  const int64_t rows = a.logits.rows(), c = a.logits.cols();
  const int64_t classes = a.classes > 0 ? a.classes : c;  // the rest pads the row
  HWT_CHECK(classes <= c, "cross_entropy: {} classes in {} columns", classes, c);
  const int32_t* tg = a.targets.as<int32_t>();
  for (int64_t r = 0; r < rows; ++r)
    if (tg[r] >= classes) fail("target class {} outside the {} classes", tg[r], classes);
  const float* logits = a.logits.as<float>();
  float* losses = a.losses.as<float>();
  if (a.lse.defined()) {
    expect_f32(a.lse, "lse");
    HWT_CHECK(a.lse.numel() == rows, "cross entropy lse {} for {} rows", a.lse.str(), rows);
  }
  float* row_lse = a.lse.defined() ? a.lse.as<float>() : nullptr;
  // The fp8 copies are the casts of the gradient's f32 values (here where d_logits is not kept).
  std::vector<float> grad(a.fp8.active() && !a.d_logits.defined() ? size_t(rows * c) : 0);
  float* dl = a.d_logits.defined() ? a.d_logits.as<float>() : grad.empty() ? nullptr : grad.data();
  const float scale = a.grad_scale * (a.loss_scale.defined() ? a.loss_scale.as<float>()[0] : 1.0f);
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const float* x = logits + r * c;
    float* d = dl ? dl + r * c : nullptr;
    if (tg[r] < 0) {
      losses[r] = 0.0f;
      if (row_lse) row_lse[r] = 0.0f;
      if (d) std::fill(d, d + c, 0.0f);
      continue;
    }
    float mx = x[0];
    for (int64_t j = 1; j < classes; ++j) mx = std::max(mx, x[j]);
    double z = 0;
    for (int64_t j = 0; j < classes; ++j) z += std::exp(static_cast<double>(x[j] - mx));
    const float lse = mx + static_cast<float>(std::log(z));
    losses[r] = lse - x[tg[r]];
    if (row_lse) row_lse[r] = lse;
    if (!d) continue;
    // x may alias d: read each logit before overwriting it.
    for (int64_t j = 0; j < classes; ++j) {
      const float p = std::exp(x[j] - lse);
      d[j] = (p - (j == tg[r] ? 1.0f : 0.0f)) * scale;
    }
    std::fill(d + classes, d + c, 0.0f);
  }
  if (a.fp8.active()) cast_fp8_out(*this, Tensor{dl, Shape{rows, c}, DType::F32}, a.fp8);
}

void CpuBackend::argmax_rows(const ArgmaxRows& a) {
  expect_f32(a.logits, "logits");
  expect_i32(a.out, "out");
  const int64_t rows = a.logits.rows(), c = a.logits.cols();
  const int64_t classes = a.classes > 0 ? a.classes : c;
  const float* x = a.logits.as<float>();
  int32_t* o = a.out.as<int32_t>();
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    int64_t best = 0;
    for (int64_t j = 1; j < classes; ++j)
      if (x[r * c + j] > x[r * c + best]) best = j;
    o[r] = static_cast<int32_t>(best);
  }
}

}  // namespace hwt
