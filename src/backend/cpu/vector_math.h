// Element-wise math of the CPU kernels over contiguous runs of floats, vectorised with Highway
// and dispatched at run time to the widest instruction set the CPU has (SSE4, AVX2, AVX-512),
// so the portable build is as fast as the native one. Every lane, the tail included, is
// computed by the same vector code: a result does not depend on where a run starts or ends.
#pragma once

#include <cstdint>

#include "core/activation_math.h"

namespace hwt::vec {

// y[i] = act(x[i]); y may be x.
void activate(Activation act, const float* x, float* y, int64_t n);

// z[i] += bias[i] (bias may be null), then y[i] = act(z[i]); y may be z.
void bias_activate(Activation act, const float* bias, float* z, float* y, int64_t n);

// dy[i] *= act'(x[i]).
void scale_by_activation_grad(Activation act, const float* x, float* dy, int64_t n);

// The gated MLP (act is the gate's function): y[i] = act(gate[i]) · up[i].
void glu(Activation act, const float* gate, const float* up, float* y, int64_t n);

// Its gradient: d_gate[i] = dy[i] · up[i] · act'(gate[i]), d_up[i] = dy[i] · act(gate[i]).
void glu_grad(Activation act, const float* gate, const float* up, const float* dy, float* d_gate,
              float* d_up, int64_t n);

// Σ x[i]², accumulated in double.
double sum_squares(const float* x, int64_t n);

// The Highway targets (HWY_AVX2, ...) this file was compiled for; dispatch takes the best one
// the CPU supports. For tests that run every one.
int64_t compiled_targets();

}  // namespace hwt::vec
