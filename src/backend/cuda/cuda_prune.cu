// Runtime pruning of activations and activation gradients in one pass: 16-byte loads, compare,
// write back only packs that changed, count the zeros with a block reduction, one atomic per
// block. The comparison follows the CPU reference (cpu_prune.cpp): |x| <= tau in float.
#include "backend/cuda/cuda_common.cuh"
#include "backend/cuda/cuda_kernels.h"
#include "core/integer_math.h"

namespace hwt::cuda {
namespace {

constexpr int kMaxBlocks = 4096;

// Prunes V elements (as floats) in place; returns how many are zero afterwards.
template <int V>
__device__ __forceinline__ unsigned prune_values(float (&v)[V], float tau, bool& changed) {
  unsigned zeros = 0;
#pragma unroll
  for (int k = 0; k < V; ++k) {
    if (v[k] != 0.0f && fabsf(v[k]) <= tau) {
      v[k] = 0.0f;
      changed = true;
    }
    zeros += v[k] == 0.0f;
  }
  return zeros;
}

template <class T, int V>
__global__ void __launch_bounds__(kBlockThreads)
    prune_kernel(T* x, int64_t n, float tau, unsigned long long* zeros_out) {
  __shared__ unsigned warp_zeros[32];
  unsigned zeros = 0;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x * V;
  for (int64_t i = (blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x) * V; i < n;
       i += stride) {
    if (i + V <= n) {
      float v[V];
      load_floats<T, V>(x + i, v);
      bool changed = false;
      zeros += prune_values<V>(v, tau, changed);
      if (changed) store_floats<T, V>(x + i, v);
    } else {
      for (int64_t j = i; j < n; ++j) {
        float v[1] = {to_f<T>(x[j])};
        bool changed = false;
        zeros += prune_values<1>(v, tau, changed);
        if (changed) x[j] = from_f<T>(0.0f);
      }
    }
  }
  const unsigned block = block_sum(zeros, warp_zeros);
  if (threadIdx.x == 0) atomicAdd(zeros_out, static_cast<unsigned long long>(block));
}

template <class T>
void prune_typed(const Launch& l, void* x, int64_t n, float tau, unsigned long long* zeros) {
  constexpr int V = kVec16<T>;
  const bool vec = aligned16(x);
  const int64_t per_block = static_cast<int64_t>(kBlockThreads) * (vec ? V : 1);
  const int64_t wanted = ceil_div(n, per_block);
  const int blocks = static_cast<int>(wanted < 1 ? 1 : (wanted > kMaxBlocks ? kMaxBlocks : wanted));
  T* px = static_cast<T*>(x);
  if (vec)
    prune_kernel<T, V><<<blocks, kBlockThreads, 0, l.stream>>>(px, n, tau, zeros);
  else
    prune_kernel<T, 1><<<blocks, kBlockThreads, 0, l.stream>>>(px, n, tau, zeros);
}

}  // namespace

void prune_small(const Launch& l, DType dt, void* x, int64_t n, float tau,
                 unsigned long long* zeros) {
  HWT_DISPATCH_FLOAT(dt, T, prune_typed<T>(l, x, n, tau, zeros));
}

}  // namespace hwt::cuda
