// The activation functions a linear layer can fuse (model.activation), and their scalar
// definitions and derivatives shared by the CPU reference and the CUDA kernels. Kept free of
// host-only headers so device code can include it.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/hostdevice.h"

namespace hwt {

// SwiGlu and GeGlu are gated (Shazeer 2020, "GLU Variants Improve Transformer"): the MLP's
// first projection yields a gate and an up half, and its output is act(gate) · up. For them
// activate() is the gate's function: SiLU (Llama, Mistral, Qwen) and tanh GELU (Gemma).
enum class Activation : uint8_t { None, Gelu, GeluTanh, Relu, SwiGlu, GeGlu };

constexpr bool is_gated(Activation a) {
  return a == Activation::SwiGlu || a == Activation::GeGlu;
}

// SiLU (swish): x·σ(x).
HWT_HD float silu(float x) {
  return x / (1.0f + expf(-x));
}

HWT_HD float silu_grad(float x) {
  const float s = 1.0f / (1.0f + expf(-x));
  return s * (1.0f + x * (1.0f - s));
}

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
    case Activation::GeGlu:
      return gelu_tanh(x);
    case Activation::SwiGlu:
      return silu(x);
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
    case Activation::GeGlu:
      return gelu_tanh_grad(x);
    case Activation::SwiGlu:
      return silu_grad(x);
    case Activation::Relu:
      return x > 0.0f ? 1.0f : 0.0f;
    case Activation::None:
      return 1.0f;
  }
  return 1.0f;
}

// A gated unit (GluFwd): a(gate) · up; and its backward for the incoming dy (GluBwd): the
// gradients of gate and of up. One expression for every kernel that computes them.
HWT_HD float gated(Activation act, float gate, float up) {
  return activate(act, gate) * up;
}

struct GatedGrad {
  float d_gate, d_up;
};

HWT_HD GatedGrad gated_grad(Activation act, float gate, float up, float dy) {
  return {dy * up * activate_grad(act, gate), dy * activate(act, gate)};
}

}  // namespace hwt
