// The activation functions a linear layer can fuse (model.activation), and their scalar
// definitions and derivatives shared by the CPU reference and the CUDA kernels. Kept free of
// host-only headers so device code can include it.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/hostdevice.h"

namespace hwt {

enum class Activation : uint8_t { None, Gelu, GeluTanh, Relu };

// GELU, exact (erf) form: x·Φ(x).
HWT_HD float gelu_erf(float x) {
  return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
}

HWT_HD float gelu_erf_grad(float x) {
  const float cdf = 0.5f * (1.0f + erff(x * 0.70710678118654752f));
  const float pdf = 0.39894228040143268f * expf(-0.5f * x * x);
  return cdf + x * pdf;
}

// GELU, tanh approximation (GPT-2, PyTorch approximate="tanh").
HWT_HD float gelu_tanh(float x) {
  const float u = 0.79788456080286536f * (x + 0.044715f * x * x * x);
  return 0.5f * x * (1.0f + tanhf(u));
}

HWT_HD float gelu_tanh_grad(float x) {
  const float u = 0.79788456080286536f * (x + 0.044715f * x * x * x);
  const float t = tanhf(u);
  const float du = 0.79788456080286536f * (1.0f + 3.0f * 0.044715f * x * x);
  return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * du;
}

HWT_HD float activate(Activation act, float x) {
  switch (act) {
    case Activation::Gelu:
      return gelu_erf(x);
    case Activation::GeluTanh:
      return gelu_tanh(x);
    case Activation::Relu:
      return x > 0.0f ? x : 0.0f;
    case Activation::None:
      return x;
  }
  return x;
}

HWT_HD float activate_grad(Activation act, float x) {
  switch (act) {
    case Activation::Gelu:
      return gelu_erf_grad(x);
    case Activation::GeluTanh:
      return gelu_tanh_grad(x);
    case Activation::Relu:
      return x > 0.0f ? 1.0f : 0.0f;
    case Activation::None:
      return 1.0f;
  }
  return 1.0f;
}

}  // namespace hwt
