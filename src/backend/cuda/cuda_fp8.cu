// The fp8 cast (Fp8Cast in ops.h): out = fp8(x · scale), rounded to nearest even and saturating,
// as the operand copy of an fp8 GEMM, laid out as x or transposed (the K-major copy a backward
// GEMM reads), with what the cast saw (amax, saturated, flushed to zero, not finite) reduced per
// block and added to the tensor's running figures with one atomic each. The conversion is the
// hardware's (cvt.rn.satfinite on sm_89 and later, cuda_fp8.h's emulation before); NaN stays NaN.
// Also delayed scaling's end-of-step update of the scales (Fp8ScaleUpdate).
#include <cuda_fp8.h>

#include <algorithm>

#include "backend/cuda/cuda_common.cuh"
#include "backend/cuda/cuda_kernels.h"
#include "core/integer_math.h"

namespace hwt::cuda {
namespace {

// Whether |v| (scaled, before rounding) rounds past the format's largest finite value: E4M3's
// largest, 448 = 1.75 · 2^8, has an even mantissa, so the tie at 464 rounds down to it; E5M2's,
// 57344 = 1.75 · 2^15, an odd one, so the tie at 61440 rounds up, past it.
template <__nv_fp8_interpretation_t F>
__device__ __forceinline__ bool rounds_past_largest(float v) {
  if constexpr (F == __NV_E4M3)
    return v > 464.0f;
  else
    return v >= 61440.0f;
}

// What a thread's casts saw.
struct Tally {
  float amax = 0.0f;
  int overflow = 0, underflow = 0, non_finite = 0;
};

template <__nv_fp8_interpretation_t F>
__device__ __forceinline__ uint8_t cast_one(float x, float scale, Tally& t) {
  const float v = x * scale;
  const auto code = static_cast<uint8_t>(__nv_cvt_float_to_fp8(v, __NV_SATFINITE, F));
  if (!isfinite(x)) {
    ++t.non_finite;
    return code;
  }
  t.amax = fmaxf(t.amax, fabsf(x));
  if (rounds_past_largest<F>(fabsf(v))) ++t.overflow;
  if (x != 0.0f && (code & 0x7fu) == 0) ++t.underflow;
  return code;
}

// The block's tally added to the tensor's figures: amax by an integer maximum (a non-negative
// float orders as its bits do), the counts by sums.
__device__ __forceinline__ void add_tally(Tally t, const Fp8CastArgs& a) {
  if (a.amax == nullptr) return;  // a cast that keeps no figures (the same for every thread)
  __shared__ int red[32];
  __shared__ float red_max[32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const float m = warp_max(t.amax);
  if (lane == 0) red_max[warp] = m;
  const int over = block_sum(t.overflow, red);
  const int under = block_sum(t.underflow, red);
  const int bad = block_sum(t.non_finite, red);  // block_sum's barriers order red_max too
  if (threadIdx.x != 0) return;
  float amax = 0.0f;
  for (int w = 0; w < static_cast<int>(blockDim.x >> 5); ++w) amax = fmaxf(amax, red_max[w]);
  if (amax > 0.0f) atomicMax(reinterpret_cast<int*>(a.amax), __float_as_int(amax));
  if (over) atomicAdd(a.counts, over);
  if (under) atomicAdd(a.counts + 1, under);
  if (bad) atomicAdd(a.counts + 2, bad);
}

// Laid out as x: V elements a step (16 bytes of x) where x allows, one at a time otherwise.
template <class T, __nv_fp8_interpretation_t F, int V>
__global__ void cast_kernel(Fp8CastArgs a) {
  const T* x = static_cast<const T*>(a.x);
  uint8_t* out = static_cast<uint8_t*>(a.out);
  const int64_t n = a.rows * a.cols;
  const float scale = *a.scale;
  Tally t;
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = (blockIdx.x * int64_t{blockDim.x} + threadIdx.x) * V; i < n; i += stride * V) {
    if (i + V <= n) {
      float xv[V];
      load_floats<T, V>(x + i, xv);
      Pack<uint8_t, V> codes;
#pragma unroll
      for (int e = 0; e < V; ++e) codes.v[e] = cast_one<F>(xv[e], scale, t);
      store_pack<uint8_t, V>(out + i, codes);
    } else {
      for (int64_t j = i; j < n; ++j) out[j] = cast_one<F>(to_f<T>(x[j]), scale, t);
    }
  }
  add_tally(t, a);
}

// Transposed: a block casts a 64 x 64 tile of x into shared memory, reading rows, and writes it
// out as the tile's columns. A whole tile is read 16 bytes of x a thread and written 16 bytes of
// a column a thread where x's rows and out's rows allow it; edge tiles go an element at a time.
// The tile's rows are 68 bytes apart: whole words for the codes' stores, and the four column
// pieces a warp reads (rows 16 apart) fall in two banks, not one.
constexpr int kTileT = 64;
constexpr int kTileThreads = 256;
constexpr int kTilePitch = kTileT + 4;

template <class T, __nv_fp8_interpretation_t F>
__global__ void __launch_bounds__(kTileThreads) cast_transpose_kernel(Fp8CastArgs a) {
  constexpr int V = kVec16<T>;
  __shared__ __align__(16) uint8_t tile[kTileT][kTilePitch];
  const T* x = static_cast<const T*>(a.x);
  uint8_t* out = static_cast<uint8_t*>(a.out);
  const float scale = *a.scale;
  const auto x_at = reinterpret_cast<uintptr_t>(x), out_at = reinterpret_cast<uintptr_t>(out);
  const bool rows_in_vectors = a.cols % V == 0 && x_at % 16 == 0;
  const bool columns_in_vectors = a.rows % 16 == 0 && out_at % 16 == 0;
  const bool words = a.rows % 4 == 0 && out_at % 4 == 0;
  Tally t;
  // Row tiles on x (no practical limit), column tiles on y, looping past the grid's 65535.
  const int64_t r0 = int64_t{blockIdx.x} * kTileT;
  for (int64_t c0 = int64_t{blockIdx.y} * kTileT; c0 < a.cols; c0 += int64_t{gridDim.y} * kTileT) {
    const bool whole = r0 + kTileT <= a.rows && c0 + kTileT <= a.cols;
    if (whole && rows_in_vectors) {
      constexpr int kChunks = kTileT / V;  // of a tile row
      for (int w = threadIdx.x; w < kTileT * kChunks; w += kTileThreads) {
        const int r = w / kChunks, cc = (w % kChunks) * V;
        float xv[V];
        load_floats<T, V>(x + (r0 + r) * a.cols + c0 + cc, xv);
#pragma unroll
        for (int q = 0; q < V; q += 4) {
          uint32_t word = 0;
#pragma unroll
          for (int e = 0; e < 4; ++e) word |= uint32_t{cast_one<F>(xv[q + e], scale, t)} << (8 * e);
          *reinterpret_cast<uint32_t*>(&tile[r][cc + q]) = word;
        }
      }
    } else {
      const int c = threadIdx.x % kTileT;
      for (int r = threadIdx.x / kTileT; r < kTileT; r += kTileThreads / kTileT) {
        const int64_t gr = r0 + r, gc = c0 + c;
        tile[r][c] = gr < a.rows && gc < a.cols
                         ? cast_one<F>(to_f<T>(x[gr * a.cols + gc]), scale, t)
                         : uint8_t{0};
      }
    }
    __syncthreads();
    if (whole && columns_in_vectors) {
      // Four threads write a column's 64 bytes: one 16-byte store each.
      static_assert(kTileT * kTileT / 16 == kTileThreads);
      const int j = threadIdx.x / 4, q = (threadIdx.x % 4) * 16;
      Pack<uint8_t, 16> p;
#pragma unroll
      for (int e = 0; e < 16; ++e) p.v[e] = tile[q + e][j];
      store_pack<uint8_t, 16>(out + (c0 + j) * a.rows + r0 + q, p);
    } else {
      for (int w = threadIdx.x; w < kTileT * kTileT / 4; w += kTileThreads) {
        const int j = w / (kTileT / 4), q = (w % (kTileT / 4)) * 4;
        const int64_t oc = c0 + j, orow = r0 + q;
        if (oc >= a.cols || orow >= a.rows) continue;
        uint8_t* o = out + oc * a.rows + orow;
        if (words) {
          *reinterpret_cast<uint32_t*>(o) = uint32_t{tile[q][j]} | uint32_t{tile[q + 1][j]} << 8 |
                                            uint32_t{tile[q + 2][j]} << 16 |
                                            uint32_t{tile[q + 3][j]} << 24;
        } else {
          for (int e = 0; e < 4 && orow + e < a.rows; ++e) o[e] = tile[q + e][j];
        }
      }
    }
    __syncthreads();  // the tile is rewritten by the next column tile
  }
  add_tally(t, a);
}

template <class T, __nv_fp8_interpretation_t F>
void cast_typed(const Launch& l, const Fp8CastArgs& a) {
  if (a.transpose) {
    const dim3 grid(
        static_cast<unsigned>(ceil_div(a.rows, int64_t{kTileT})),
        static_cast<unsigned>(std::min(ceil_div(a.cols, int64_t{kTileT}), int64_t{65535})));
    cast_transpose_kernel<T, F><<<grid, kTileThreads, 0, l.stream>>>(a);
    return;
  }
  constexpr int V = kVec16<T>;
  const int64_t n = a.rows * a.cols;
  if (aligned16(a.x) && reinterpret_cast<uintptr_t>(a.out) % V == 0)
    cast_kernel<T, F, V><<<grid_for(l, ceil_div(n, V)), kBlockThreads, 0, l.stream>>>(a);
  else
    cast_kernel<T, F, 1><<<grid_for(l, n), kBlockThreads, 0, l.stream>>>(a);
}

// One warp per tensor. Its history moves down by one step a warp-wide chunk at a time: every
// lane reads its next element before any lane of the chunk writes, and a later chunk reads only
// elements no earlier chunk wrote, so the shift needs no copy.
__global__ void scale_update_kernel(Fp8ScaleUpdateArgs a) {
  const int64_t t = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x & 31;
  if (t >= a.tensors) return;  // the whole warp: t is the same for its lanes
  float* h = a.history + t * a.len;
  const float newest = a.amax[t];
  float window = newest;
  for (int64_t base = 0; base < a.len; base += 32) {
    const int64_t i = base + lane;
    float v = 0.0f;
    if (i < a.len) v = i + 1 < a.len ? h[i + 1] : newest;
    __syncwarp();
    if (i < a.len) {
      h[i] = v;
      window = fp8_amax_join(window, v);
    }
  }
  for (int offset = 16; offset > 0; offset >>= 1)
    window = fp8_amax_join(window, __shfl_xor_sync(0xffffffffu, window, offset));
  if (lane != 0) return;
  if (a.algorithm == AmaxAlgorithm::MostRecent) window = newest;
  const float scale = fp8_next_scale(window, a.scale[t], a.max_value, a.margin);
  a.scale[t] = scale;
  a.scale_inv[t] = 1.0f / scale;
  a.amax[t] = 0.0f;
}

}  // namespace

void fp8_scale_update(const Launch& l, const Fp8ScaleUpdateArgs& a) {
  if (a.tensors == 0) return;
  constexpr int kWarps = kBlockThreads / 32;
  const auto blocks = static_cast<unsigned>(ceil_div(a.tensors, int64_t{kWarps}));
  scale_update_kernel<<<blocks, kBlockThreads, 0, l.stream>>>(a);
}

void fp8_cast(const Launch& l, const Fp8CastArgs& a) {
  if (a.rows * a.cols == 0) return;
  if (a.out_dt == DType::F8E4M3) {
    HWT_DISPATCH_FLOAT(a.x_dt, T, (cast_typed<T, __NV_E4M3>(l, a)));
  } else {
    HWT_DISPATCH_FLOAT(a.x_dt, T, (cast_typed<T, __NV_E5M2>(l, a)));
  }
}

}  // namespace hwt::cuda
