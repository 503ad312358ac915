// Helpers shared by the CUDA kernels: element conversions, 16-byte vectors, the block size and
// grid of the grid-stride kernels, warp and block reductions, Philox dropout draws, and dtype
// dispatch for the launchers.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "backend/cuda/cuda_kernels.h"
#include "core/dtype.h"
#include "core/integer_math.h"
#include "core/philox.h"

namespace hwt::cuda {

using bf16 = __nv_bfloat16;
using f16 = __half;

template <class T>
__device__ __forceinline__ float to_f(T v);
template <>
__device__ __forceinline__ float to_f<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ float to_f<bf16>(bf16 v) {
  return __bfloat162float(v);
}
template <>
__device__ __forceinline__ float to_f<f16>(f16 v) {
  return __half2float(v);
}

template <class T>
__device__ __forceinline__ T from_f(float v);
template <>
__device__ __forceinline__ float from_f<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ bf16 from_f<bf16>(float v) {
  return __float2bfloat16_rn(v);
}
template <>
__device__ __forceinline__ f16 from_f<f16>(float v) {
  return __float2half_rn(v);
}

// Rounds a float to what a T stores (identity for float).
template <class T>
__device__ __forceinline__ float round_to(float v) {
  return to_f<T>(from_f<T>(v));
}

// V consecutive elements of T moved as one access (16 bytes when V = 16 / sizeof(T)).
template <class T, int V>
struct alignas(sizeof(T) * V) Pack {
  T v[V];
};

template <class T>
constexpr int kVec16 = static_cast<int>(16 / sizeof(T));

template <class T, int V>
__device__ __forceinline__ Pack<T, V> load_pack(const T* p) {
  return *reinterpret_cast<const Pack<T, V>*>(p);
}

template <class T, int V>
__device__ __forceinline__ void store_pack(T* p, const Pack<T, V>& v) {
  *reinterpret_cast<Pack<T, V>*>(p) = v;
}

template <class T, int V>
__device__ __forceinline__ void load_floats(const T* p, float (&out)[V]) {
  const Pack<T, V> pk = load_pack<T, V>(p);
#pragma unroll
  for (int i = 0; i < V; ++i) out[i] = to_f<T>(pk.v[i]);
}

template <class T, int V>
__device__ __forceinline__ void store_floats(T* p, const float (&in)[V]) {
  Pack<T, V> pk;
#pragma unroll
  for (int i = 0; i < V; ++i) pk.v[i] = from_f<T>(in[i]);
  store_pack<T, V>(p, pk);
}

// Threads per block of the grid-stride and one-thread-per-element kernels (elementwise ops,
// embeddings, reductions, pruning, optimizers).
constexpr int kBlockThreads = 256;

// Blocks of kBlockThreads for a grid-stride loop over `work` items: one per kBlockThreads items,
// at least one, at most eight per multiprocessor.
inline int grid_for(const Launch& l, int64_t work) {
  const int64_t blocks = ceil_div(work, kBlockThreads);
  return static_cast<int>(blocks < 8LL * l.sms ? (blocks > 0 ? blocks : 1) : 8LL * l.sms);
}

// Programmatic dependent launch (sm_90 and later; no-ops before). A grid launched by
// launch_kernel(..., dependent = true) may start while the grid before it still runs: it must call
// wait_prior_grid() before touching memory that grid, or any before it, writes. Grids call
// release_next_grid() once they have waited, so that the next dependent one starts early.
__device__ __forceinline__ void wait_prior_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__device__ __forceinline__ void release_next_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;");
#endif
}

// Enqueues kernel<<<grid, block, smem, l.stream>>>(args...), as a programmatic dependent launch
// when `dependent` and the device and build have them (l.pdl). Launch errors surface at
// check_launch.
template <class... Params, class... Args>
void launch_kernel(const Launch& l, bool dependent, void (*kernel)(Params...), dim3 grid,
                   dim3 block, size_t smem, Args... args) {
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = l.stream;
  cfg.attrs = &attr;
  cfg.numAttrs = dependent && l.pdl ? 1 : 0;
  cudaLaunchKernelEx(&cfg, kernel, static_cast<Params>(args)...);
}

constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

// 2^x in one MUFU.EX2, subnormal results flushed to zero: exp2f and expf add range fix-ups
// (several instructions per element) that softmax weights below 2^-126 do not need.
__device__ __forceinline__ float exp2_ftz(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// (softmax - one-hot(target)) · scale for the V logits at column j of a row with log-sum-exp lse:
// the cross-entropy gradient, as cross_entropy and its fp8 form compute it.
template <int V>
__device__ __forceinline__ void ce_grad(float (&v)[V], int64_t j, int target, float lse,
                                        float scale) {
  const float lse2 = lse * kLog2e;
#pragma unroll
  for (int k = 0; k < V; ++k)
    v[k] = (exp2_ftz(fmaf(v[k], kLog2e, -lse2)) - (j + k == target ? 1.0f : 0.0f)) * scale;
}

// Sum over the warp (float, double or an integer count); every lane gets the result.
template <class T>
__device__ __forceinline__ T warp_sum(T v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// Sum over the block (blockDim.x a multiple of 32, at most 1024); every thread gets the
// result. `shared` holds 32 values. The order is fixed, so results are deterministic.
template <class Acc>
__device__ __forceinline__ Acc block_sum(Acc v, Acc* shared) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  v = warp_sum(v);
  __syncthreads();
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  Acc t = lane < warps ? shared[lane] : Acc(0);
  return warp_sum(t);
}

// The uniform draw of Philox word k (0..3), as core/philox.h's philox_uniform computes it.
__device__ __forceinline__ float philox_word_uniform(const Philox4& r, int k) {
  const uint32_t w = k == 0 ? r.v[0] : k == 1 ? r.v[1] : k == 2 ? r.v[2] : r.v[3];
  return static_cast<float>(w >> 8) * (1.0f / 16777216.0f);
}

// Dropout multipliers (0 or scale) of elements index .. index + V - 1, with index % 4 == 0
// and V a multiple of 4: one Philox call per four elements.
template <int V>
__device__ __forceinline__ void dropout_factors4(uint64_t seed, uint64_t index, float p,
                                                 float scale, float (&f)[V]) {
#pragma unroll
  for (int q = 0; q < V / 4; ++q) {
    const Philox4 r = philox4x32((index >> 2) + static_cast<uint64_t>(q), seed);
#pragma unroll
    for (int k = 0; k < 4; ++k) f[q * 4 + k] = philox_word_uniform(r, k) >= p ? scale : 0.0f;
  }
}

// Dropout multiplier of one element.
__device__ __forceinline__ float dropout_factor(uint64_t seed, uint64_t index, float p,
                                                float scale) {
  const Philox4 r = philox4x32(index >> 2, seed);
  return philox_word_uniform(r, static_cast<int>(index & 3)) >= p ? scale : 0.0f;
}

// Multipliers of V consecutive elements starting anywhere (vector path when aligned to 4).
template <int V>
__device__ __forceinline__ void dropout_factors(uint64_t seed, uint64_t index, float p, float scale,
                                                float (&f)[V]) {
  if constexpr (V % 4 == 0) {
    if ((index & 3) == 0) {
      dropout_factors4<V>(seed, index, p, scale, f);
      return;
    }
  }
#pragma unroll
  for (int i = 0; i < V; ++i) f[i] = dropout_factor(seed, index + i, p, scale);
}

// Launch-side alignment check for the 16-byte paths.
inline bool aligned16(const void* p) {
  return (reinterpret_cast<uintptr_t>(p) & 15u) == 0;
}

}  // namespace hwt::cuda

// Runs the statement with T bound to the element type of a floating dtype.
#define HWT_DISPATCH_FLOAT(dtype, T, ...) \
  switch (dtype) {                        \
    case ::hwt::DType::F32: {             \
      using T = float;                    \
      __VA_ARGS__;                        \
      break;                              \
    }                                     \
    case ::hwt::DType::BF16: {            \
      using T = ::hwt::cuda::bf16;        \
      __VA_ARGS__;                        \
      break;                              \
    }                                     \
    case ::hwt::DType::F16: {             \
      using T = ::hwt::cuda::f16;         \
      __VA_ARGS__;                        \
      break;                              \
    }                                     \
    default:                              \
      break;                              \
  }
