// CpuBackend: the gated MLP activation (SwiGLU, GeGLU).
#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/vector_math.h"

namespace hwt {
namespace {

void check_glu(Activation kind, const Tensor& pre, const Tensor& half) {
  HWT_CHECK(is_gated(kind), "glu needs a gated activation (swiglu, geglu)");
  expect_f32(pre, "glu pre");
  HWT_CHECK(pre.rows() == half.rows() && pre.cols() == 2 * half.cols(),
            "glu pre {} must be [rows, 2n] for an output {}", pre.str(), half.str());
}

}  // namespace

void CpuBackend::glu_forward(const GluFwd& a) {
  check_glu(a.kind, a.pre, a.y);
  const int64_t rows = a.y.rows(), n = a.y.cols();
  const float* pre = a.pre.as<float>();
  float* y = a.y.as<float>();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < rows; ++i) {
    const float *gate = pre + i * 2 * n, *up = gate + n;
    vec::glu(a.kind, gate, up, y + i * n, n);
  }
}

void CpuBackend::glu_backward(const GluBwd& a) {
  check_glu(a.kind, a.pre, a.dy);
  HWT_CHECK(a.d_pre.numel() == a.pre.numel(), "glu d_pre {} must match pre {}", a.d_pre.str(),
            a.pre.str());
  const int64_t rows = a.dy.rows(), n = a.dy.cols();
  const float *pre = a.pre.as<float>(), *dy = a.dy.as<float>();
  float* d_pre = a.d_pre.as<float>();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < rows; ++i) {
    const float *gate = pre + i * 2 * n, *up = gate + n;
    float *d_gate = d_pre + i * 2 * n, *d_up = d_gate + n;
    vec::glu_grad(a.kind, gate, up, dy + i * n, d_gate, d_up, n);
  }
}

}  // namespace hwt
