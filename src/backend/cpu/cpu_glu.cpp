// CpuBackend: the gated MLP activation (SwiGLU, GeGLU).
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/vector_math.h"
#include "backend/fp8_linear.h"

namespace hwt {
namespace {

void check_glu(Activation kind, const Tensor& pre, const Tensor& half) {
  HWT_CHECK(is_gated(kind), "glu needs a gated activation (swiglu, geglu)");
  expect_f32(pre, "glu pre");
  HWT_CHECK(pre.rows() == half.rows() && pre.cols() == 2 * half.cols(),
            "glu pre {} must be [rows, 2n] for an output {}", pre.str(), half.str());
}

// The op's output: `out` itself, or host memory when only its fp8 copies are asked for.
Tensor output(const Tensor& out, const Fp8Out& fp8, Shape shape, std::vector<float>& host) {
  if (out.defined() || !fp8.active()) return out;
  host.resize(static_cast<size_t>(shape.numel()));
  return Tensor{host.data(), shape, DType::F32, Device::Cpu};
}

}  // namespace

void CpuBackend::glu_forward(const GluFwd& a) {
  const int64_t rows = a.pre.rows(), n = a.pre.cols() / 2;
  std::vector<float> host;
  const Tensor out = output(a.y, a.fp8, Shape{rows, n}, host);
  check_glu(a.kind, a.pre, out);
  if (a.fp8.active()) check_fp8_out(a.fp8, rows, n, "glu_forward");
  const float* pre = a.pre.as<float>();
  float* y = out.as<float>();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < rows; ++i) {
    const float *gate = pre + i * 2 * n, *up = gate + n;
    vec::glu(a.kind, gate, up, y + i * n, n);
  }
  if (a.fp8.active()) cast_fp8_out(*this, out, a.fp8);
}

void CpuBackend::glu_backward(const GluBwd& a) {
  check_glu(a.kind, a.pre, a.dy);
  const int64_t rows = a.dy.rows(), n = a.dy.cols();
  std::vector<float> host;
  const Tensor out = output(a.d_pre, a.fp8, Shape{rows, 2 * n}, host);
  HWT_CHECK(out.numel() == a.pre.numel(), "glu d_pre {} must match pre {}", out.str(), a.pre.str());
  if (a.fp8.active()) check_fp8_out(a.fp8, rows, 2 * n, "glu_backward");
  const float *pre = a.pre.as<float>(), *dy = a.dy.as<float>();
  float* d_pre = out.as<float>();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < rows; ++i) {
    const float *gate = pre + i * 2 * n, *up = gate + n;
    float *d_gate = d_pre + i * 2 * n, *d_up = d_gate + n;
    vec::glu_grad(a.kind, gate, up, dy + i * n, d_gate, d_up, n);
  }
  if (a.fp8.active()) cast_fp8_out(*this, out, a.fp8);
}

}  // namespace hwt
