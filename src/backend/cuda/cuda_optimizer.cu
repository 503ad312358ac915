// Fused optimizers over the flat fp32 buffers: one launch per step reads params, grads and
// states with 16-byte accesses, applies gradient unscaling/clipping read from device memory and
// DynaProp's pruning (a compare and a count), updates everything in place and writes the
// low-precision compute copy. The per-element arithmetic follows the CPU reference
// (cpu_optimizer.cpp) operation for operation.
#include "backend/cuda/cuda_common.cuh"
#include "backend/cuda/cuda_grad_prep.cuh"
#include "backend/cuda/cuda_kernels.h"
#include "core/integer_math.h"

#include <type_traits>

namespace hwt::cuda {
namespace {

// The state buffers of one optimizer, in the order its update reads them; nullptr: unused.
template <int S>
struct States {
  float* p[S];
};

// The per-element updates, one overload per optimizer's hyper-parameters; s holds the element's
// states in States order.
__device__ __forceinline__ void update(const AdamWHyper& h, float g, float wd, float& p,
                                       float (&s)[2]) {
  p *= 1.0f - h.lr * wd;
  s[0] = h.beta1 * s[0] + (1.0f - h.beta1) * g;
  s[1] = h.beta2 * s[1] + (1.0f - h.beta2) * g * g;
  p -= h.step_size * s[0] / (sqrtf(s[1]) / h.bc2_sqrt + h.eps);
}

__device__ __forceinline__ void update(const AdanHyper& h, float g, float wd, float& p,
                                       float (&s)[4]) {
  const float diff = h.first ? 0.0f : g - s[3];
  s[0] = h.beta1 * s[0] + (1.0f - h.beta1) * g;
  s[1] = h.beta2 * s[1] + (1.0f - h.beta2) * diff;
  const float u = g + h.beta2 * diff;
  s[2] = h.beta3 * s[2] + (1.0f - h.beta3) * u * u;
  const float denom = sqrtf(s[2]) / h.bc3_sqrt + h.eps;
  if (h.no_prox) p *= 1.0f - h.lr * wd;
  p -= h.step_size * s[0] / denom + h.step_size_diff * s[1] / denom;
  if (!h.no_prox) p /= 1.0f + h.lr * wd;
  s[3] = g;
}

__device__ __forceinline__ void update(const SgdHyper& h, float g, float wd, float& p,
                                       float (&s)[1]) {
  float d = g + wd * p;
  if (h.momentum != 0.0f) {
    s[0] = h.first ? d : h.momentum * s[0] + d;
    d = h.nesterov ? d + h.momentum * s[0] : s[0];
  }
  p -= h.lr * d;
}

// CT: the compute-copy element type, or void for none.
template <class CT>
__device__ __forceinline__ void store_compute(void* compute, int64_t i, const float* p, int count) {
  if constexpr (!std::is_void_v<CT>) {
    CT* c = static_cast<CT*>(compute) + i;
    if (count == 4) {
      float f[4] = {p[0], p[1], p[2], p[3]};
      store_floats<CT, 4>(c, f);
    } else {
      c[0] = from_f<CT>(p[0]);
    }
  }
}

template <class Hyper, int S, class CT, int V>
__global__ void __launch_bounds__(kBlockThreads)
    optimizer_kernel(Hyper h, States<S> states, OptCommon c) {
  const GradPrep prep = grad_prep(c.norm_sq, c.loss_scale, c.max_norm);
  if (prep.skip) return;
  const bool prune = c.prune_zeros != nullptr;
  unsigned zeros = 0, linear_zeros = 0;
  int64_t range = 0;  // this thread's cursor into c.linear: its indices only grow
  float* st[S];
#pragma unroll
  for (int k = 0; k < S; ++k) st[k] = states.p[k];
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x * V;
  for (int64_t i = (blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x) * V; i < c.n;
       i += stride) {
    const int count = i + V <= c.n ? V : static_cast<int>(c.n - i);
    float p[V], g[V], s[S][V] = {};
    if (count == V) {
      load_floats<float, V>(c.params + i, p);
      load_floats<float, V>(c.grads + i, g);
#pragma unroll
      for (int k = 0; k < S; ++k)
        if (st[k]) load_floats<float, V>(st[k] + i, s[k]);
    } else {
      for (int e = 0; e < count; ++e) {
        p[e] = c.params[i + e];
        g[e] = c.grads[i + e];
        for (int k = 0; k < S; ++k) s[k][e] = st[k] ? st[k][i + e] : 0.0f;
      }
    }
#pragma unroll
    for (int e = 0; e < V; ++e) {
      if (e >= count) break;
      float se[S];
#pragma unroll
      for (int k = 0; k < S; ++k) se[k] = s[k][e];
      float ge = g[e] * prep.mult;
      if (prune && fabsf(ge) <= c.prune_tau) {  // DynaProp
        ge = 0.0f;
        const int64_t at = i + e;
        while (range < c.linear_pairs && c.linear[2 * range + 1] <= at) ++range;
        (range < c.linear_pairs && c.linear[2 * range] <= at ? linear_zeros : zeros) += 1;
      }
      update(h, ge, i + e < c.n_decay ? h.weight_decay : 0.0f, p[e], se);
#pragma unroll
      for (int k = 0; k < S; ++k) s[k][e] = se[k];
    }
    if (count == V) {
      store_floats<float, V>(c.params + i, p);
#pragma unroll
      for (int k = 0; k < S; ++k)
        if (st[k]) store_floats<float, V>(st[k] + i, s[k]);
      if (c.compute) {
        if constexpr (V == 4) {
          store_compute<CT>(c.compute, i, p, 4);
        } else {
          store_compute<CT>(c.compute, i, p, 1);
        }
      }
    } else {
      for (int e = 0; e < count; ++e) {
        c.params[i + e] = p[e];
        for (int k = 0; k < S; ++k)
          if (st[k]) st[k][i + e] = s[k][e];
        if (c.compute) store_compute<CT>(c.compute, i + e, p + e, 1);
      }
    }
  }
  if (prune) {
    __shared__ unsigned warp_sums[32];
    zeros = block_sum(zeros, warp_sums);
    linear_zeros = block_sum(linear_zeros, warp_sums);
    if (threadIdx.x == 0) {
      atomicAdd(c.prune_zeros, static_cast<unsigned long long>(zeros));
      atomicAdd(c.prune_zeros + 1, static_cast<unsigned long long>(linear_zeros));
    }
  }
}

template <class CT, class Hyper, int S>
void launch_typed(const Launch& l, const Hyper& h, const States<S>& states, const OptCommon& c) {
  bool vec = aligned16(c.params) && aligned16(c.grads) &&
             (!c.compute || (reinterpret_cast<uintptr_t>(c.compute) & 7u) == 0);
  for (float* s : states.p) vec = vec && aligned16(s);
  const int64_t per = vec ? 4 : 1;
  int64_t blocks = ceil_div(c.n / per, kBlockThreads);
  const int64_t cap = 16LL * l.sms;
  blocks = blocks < 1 ? 1 : (blocks > cap ? cap : blocks);
  if (vec)
    optimizer_kernel<Hyper, S, CT, 4>
        <<<static_cast<unsigned>(blocks), kBlockThreads, 0, l.stream>>>(h, states, c);
  else
    optimizer_kernel<Hyper, S, CT, 1>
        <<<static_cast<unsigned>(blocks), kBlockThreads, 0, l.stream>>>(h, states, c);
}

template <class Hyper, int S>
void launch(const Launch& l, const Hyper& h, const States<S>& states, const OptCommon& c) {
  if (c.n == 0) return;
  if (!c.compute) return launch_typed<void>(l, h, states, c);
  switch (c.compute_dt) {
    case DType::BF16:
      return launch_typed<bf16>(l, h, states, c);
    case DType::F16:
      return launch_typed<f16>(l, h, states, c);
    default:
      return launch_typed<float>(l, h, states, c);
  }
}

__global__ void loss_scale_kernel(float* state, const float* norm_sq, float growth, float backoff,
                                  int64_t interval) {
  float scale = state[0], clean = state[1];
  if (!isfinite(norm_sq[0])) {
    scale *= backoff;
    clean = 0.0f;
  } else {
    clean += 1.0f;
    if (clean >= static_cast<float>(interval)) {
      scale *= growth;
      clean = 0.0f;
    }
  }
  state[0] = scale;
  state[1] = clean;
}

}  // namespace

void adamw_step(const Launch& l, const OptCommon& c, float* m, float* v, const AdamWHyper& h) {
  launch(l, h, States<2>{{m, v}}, c);
}
void adan_step(const Launch& l, const OptCommon& c, float* m, float* v, float* n, float* prev,
               const AdanHyper& h) {
  launch(l, h, States<4>{{m, v, n, prev}}, c);
}
void sgd_step(const Launch& l, const OptCommon& c, float* buf, const SgdHyper& h) {
  launch(l, h, States<1>{{buf}}, c);
}

void loss_scale_update(const Launch& l, float* state, const float* norm_sq, float growth,
                       float backoff, int64_t interval) {
  loss_scale_kernel<<<1, 1, 0, l.stream>>>(state, norm_sq, growth, backoff, interval);
}

}  // namespace hwt::cuda
