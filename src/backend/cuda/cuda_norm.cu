// Layernorm (or RMSNorm: mean 0, no beta) and the residual add (+dropout, +norm), forward and
// backward: a warp per row
// at a time, 16-byte accesses, statistics in fp32. Rows that fit in registers are looped over
// by a grid that is resident at once, each warp loading its next row while the current one
// computes. Parameter gradients are reduced deterministically: warp-private shared-memory
// partials, then per-block partials in global scratch, added in a fixed order by
// add_column_sums (cuda_reduce.cu).
#include "backend/cuda/cuda_common.cuh"
#include "backend/cuda/cuda_kernels.h"
#include "core/integer_math.h"

#include <initializer_list>
#include <type_traits>

namespace hwt::cuda {
namespace {

constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
constexpr int kCacheChunks = 4;  // rows up to 4 x 32 x 16 bytes stay in registers
// Register-cached rows (R > 0): the grid is at most this many blocks per multiprocessor,
// which __launch_bounds__ makes fit in registers, so the whole grid is resident and its warps
// loop over rows with the next row's loads in flight. Few warps suffice then, and in the
// backward fewer blocks mean fewer partial rows to add.
constexpr int kFwdBlocksPerSm = 4;
constexpr int kBwdBlocksPerSm = 2;
// Uncached rows (no prefetch) need more warps: in the forward a warp per row, registers for
// at least 32 resident warps per multiprocessor; in the backward up to 24 warps per
// multiprocessor.
constexpr int kFwdUncachedBlocksPerSm = 8;
constexpr int kBwdUncachedBlocksPerSm = 6;

// Column of this lane's chunk `it` of a row: 32 lanes take 32 consecutive V-wide chunks.
template <int V>
__device__ __forceinline__ int64_t chunk_col(int it, int lane) {
  return (static_cast<int64_t>(it) * 32 + lane) * V;
}

// The cached paths hold 16-byte chunks as four 32-bit words (uint4) and convert an element
// where it is used: a chunk kept as 16-bit halves would take a register per half.
template <class T>
__device__ __forceinline__ uint4 load_raw(const T* p) {
  return *reinterpret_cast<const uint4*>(p);
}

// The V elements of T in a raw chunk, as floats (exactly what to_f<T> gives).
template <class T, int V>
__device__ __forceinline__ void unpack(const uint4& u, float (&out)[V]) {
  static_assert(V * sizeof(T) == sizeof(uint4), "16-byte chunks only");
  const uint32_t w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
  for (int k = 0; k < V; ++k) {
    if constexpr (sizeof(T) == 4) {
      out[k] = __uint_as_float(w[k]);
    } else {
      const uint32_t h = k % 2 ? w[k / 2] >> 16 : w[k / 2] & 0xffffu;
      if constexpr (std::is_same_v<T, bf16>)
        out[k] = __uint_as_float(h << 16);
      else
        out[k] = __half2float(__ushort_as_half(static_cast<unsigned short>(h)));
    }
  }
}

// V floats, each already a value of T, as a raw chunk of T (exact).
template <class T, int V>
__device__ __forceinline__ uint4 pack(const float (&in)[V]) {
  static_assert(V * sizeof(T) == sizeof(uint4), "16-byte chunks only");
  uint32_t w[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    if constexpr (sizeof(T) == 4) {
      w[i] = __float_as_uint(in[i]);
    } else if constexpr (std::is_same_v<T, bf16>) {
      w[i] = __bfloat16_as_ushort(__float2bfloat16_rn(in[2 * i])) |
             static_cast<uint32_t>(__bfloat16_as_ushort(__float2bfloat16_rn(in[2 * i + 1]))) << 16;
    } else {
      w[i] = __half_as_ushort(__float2half_rn(in[2 * i])) |
             static_cast<uint32_t>(__half_as_ushort(__float2half_rn(in[2 * i + 1]))) << 16;
    }
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
}

// Makes a raw chunk opaque to the optimiser where it is used, so that its conversion to floats
// is neither hoisted out of the row loop nor shared between passes: floats would hold the same
// values in twice the registers. Costs no instruction.
__device__ __forceinline__ void opaque(uint4& u) {
  asm volatile("" : "+r"(u.x), "+r"(u.y), "+r"(u.z), "+r"(u.w));
}

// Dropout multipliers of the chunk at element `at`. Vectorised launches have cols % V == 0, so
// with V % 4 == 0 the chunk starts at a multiple of 4 and needs no unaligned fallback.
template <int V>
__device__ __forceinline__ void chunk_dropout(const DropArgs& d, int64_t at, float (&f)[V]) {
  if constexpr (V % 4 == 0)
    dropout_factors4<V>(d.seed, static_cast<uint64_t>(at), d.p, d.scale, f);
  else
    dropout_factors<V>(d.seed, static_cast<uint64_t>(at), d.p, d.scale, f);
}

// Residual mode: v = residual + dropout(x) at elements at .. at + V - 1, rounded to T (what
// `sum` stores).
template <class T, int V>
__device__ __forceinline__ void residual_sum(const NormFwdArgs& a, int64_t at, float (&xv)[V],
                                             float (&v)[V]) {
  if (a.drop.active()) {
    float f[V];
    chunk_dropout<V>(a.drop, at, f);
#pragma unroll
    for (int k = 0; k < V; ++k) xv[k] = f[k] == 0.0f ? 0.0f : xv[k] * f[k];
  }
#pragma unroll
  for (int k = 0; k < V; ++k) v[k] = round_to<T>(v[k] + xv[k]);
}

// rstd of a row from the sum of (v - mean)^2 over all its columns: padding columns (v = 0) each
// added mean^2, which is taken back out so the variance is over the true width. A uniform
// branch: rows without padding compute exactly what they did before padding existed.
__device__ __forceinline__ float row_rstd(const NormFwdArgs& a, float sq_sum, float mean) {
  if (a.width < a.cols) sq_sum -= static_cast<float>(a.cols - a.width) * mean * mean;
  return 1.0f / sqrtf(sq_sum / static_cast<float>(a.width) + a.eps);
}

__device__ __forceinline__ void store_stats(const NormFwdArgs& a, int64_t row, int lane, float mean,
                                            float rstd) {
  if (lane != 0) return;
  if (!a.rms) a.mean[row] = mean;
  a.rstd[row] = rstd;
}

// Rows held in registers (R chunks per lane): the warp takes rows `stride` apart. gamma and
// beta are loaded once; each row's loads are issued while the row before it computes, so a
// memory round trip is in flight behind every row's reductions and stores.
template <class T, int V, int R>
__device__ __forceinline__ void norm_fwd_cached(const NormFwdArgs& a, int64_t row, int64_t stride,
                                                int lane) {
  const int64_t n = a.cols;
  const bool residual = a.residual != nullptr;
  const T* x = static_cast<const T*>(a.x);
  const T* res = static_cast<const T*>(a.residual);
  uint4 gp[R], bp[R];  // packed: half the registers that floats would take
  if (a.gamma) {
#pragma unroll
    for (int it = 0; it < R; ++it) {
      const int64_t j = chunk_col<V>(it, lane);
      if (j < n) {
        gp[it] = load_raw<T>(static_cast<const T*>(a.gamma) + j);
        if (!a.rms) bp[it] = load_raw<T>(static_cast<const T*>(a.beta) + j);
      }
    }
  }
  uint4 xp[R], rp[R];  // the row loaded next: x, and the residual in residual mode
  auto load_row = [&](int64_t r) {
#pragma unroll
    for (int it = 0; it < R; ++it) {
      const int64_t j = chunk_col<V>(it, lane);
      if (j < n) {
        xp[it] = load_raw<T>(x + r * n + j);
        if (residual) rp[it] = load_raw<T>(res + r * n + j);
      }
    }
  };
  load_row(row);
  for (; row < a.rows; row += stride) {
    const int64_t base = row * n;
    uint4 cur[R];  // the row to normalise (residual mode: the sum), raw
#pragma unroll
    for (int it = 0; it < R; ++it) {
      const int64_t j = chunk_col<V>(it, lane);
      if (j >= n) continue;
      if (residual) {
        float xv[V], v[V];
        unpack<T, V>(xp[it], xv);
        unpack<T, V>(rp[it], v);
        residual_sum<T, V>(a, base + j, xv, v);
        cur[it] = pack<T, V>(v);
      } else {
        cur[it] = xp[it];
      }
    }
    // The next row's loads go out now, ahead of this row's stores and reductions. Rows are
    // disjoint, so passing the stores is safe (`sum` may alias x or the residual).
    if (row + stride < a.rows) load_row(row + stride);
    float acc = 0.0f;
#pragma unroll
    for (int it = 0; it < R; ++it) {
      const int64_t j = chunk_col<V>(it, lane);
      if (j >= n) continue;
      if (residual) *reinterpret_cast<uint4*>(static_cast<T*>(a.sum) + base + j) = cur[it];
      float v[V];
      unpack<T, V>(cur[it], v);
#pragma unroll
      for (int k = 0; k < V; ++k) acc += v[k];
    }
    if (!a.gamma) continue;
    const float mean = a.rms ? 0.0f : warp_sum(acc) / static_cast<float>(a.width);
    float var = 0.0f;
#pragma unroll
    for (int it = 0; it < R; ++it) {
      if (chunk_col<V>(it, lane) >= n) continue;
      opaque(cur[it]);
      float v[V];
      unpack<T, V>(cur[it], v);
#pragma unroll
      for (int k = 0; k < V; ++k) var += (v[k] - mean) * (v[k] - mean);
    }
    const float rstd = row_rstd(a, warp_sum(var), mean);
#pragma unroll
    for (int it = 0; it < R; ++it) {
      const int64_t j = chunk_col<V>(it, lane);
      if (j >= n) continue;
      opaque(cur[it]);
      opaque(gp[it]);
      float v[V], gv[V], o[V];
      unpack<T, V>(cur[it], v);
      unpack<T, V>(gp[it], gv);
#pragma unroll
      for (int k = 0; k < V; ++k) o[k] = (v[k] - mean) * rstd * gv[k];
      if (!a.rms) {
        opaque(bp[it]);
        float bv[V];
        unpack<T, V>(bp[it], bv);
#pragma unroll
        for (int k = 0; k < V; ++k) o[k] += bv[k];
      }
      store_floats<T, V>(static_cast<T*>(a.y) + base + j, o);
    }
    store_stats(a, row, lane, mean, rstd);
  }
}

// Rows too wide for registers (or unaligned, V = 1): a warp per row, three passes, the second
// and third re-reading the row (from `sum` in residual mode, which this lane has just written).
template <class T, int V>
__device__ __forceinline__ void norm_fwd_uncached(const NormFwdArgs& a, int64_t row, int lane) {
  const int64_t n = a.cols, base = row * n;
  const bool residual = a.residual != nullptr;
  const T* src = static_cast<const T*>(residual ? a.sum : a.x) + base;
  float acc = 0.0f;
  for (int64_t j = lane * V; j < n; j += 32 * V) {
    float v[V];
    if (residual) {
      float xv[V];
      load_floats<T, V>(static_cast<const T*>(a.x) + base + j, xv);
      load_floats<T, V>(static_cast<const T*>(a.residual) + base + j, v);
      residual_sum<T, V>(a, base + j, xv, v);
      store_floats<T, V>(static_cast<T*>(a.sum) + base + j, v);
    } else {
      load_floats<T, V>(src + j, v);
    }
#pragma unroll
    for (int k = 0; k < V; ++k) acc += v[k];
  }
  if (!a.gamma) return;
  const float mean = a.rms ? 0.0f : warp_sum(acc) / static_cast<float>(a.width);
  float var = 0.0f;
  for (int64_t j = lane * V; j < n; j += 32 * V) {
    float v[V];
    load_floats<T, V>(src + j, v);
#pragma unroll
    for (int k = 0; k < V; ++k) var += (v[k] - mean) * (v[k] - mean);
  }
  const float rstd = row_rstd(a, warp_sum(var), mean);
  for (int64_t j = lane * V; j < n; j += 32 * V) {
    float v[V], gv[V], bv[V] = {}, o[V];
    load_floats<T, V>(src + j, v);
    load_floats<T, V>(static_cast<const T*>(a.gamma) + j, gv);
    if (!a.rms) load_floats<T, V>(static_cast<const T*>(a.beta) + j, bv);
#pragma unroll
    for (int k = 0; k < V; ++k) o[k] = (v[k] - mean) * rstd * gv[k] + bv[k];
    store_floats<T, V>(static_cast<T*>(a.y) + base + j, o);
  }
  store_stats(a, row, lane, mean, rstd);
}

// Cached rows: warp w of the grid normalises rows w, w + (warps in the grid), ... Uncached
// rows: the grid has a warp per row.
template <class T, int V, int R>
__global__ void __launch_bounds__(kThreads, R > 0 ? kFwdBlocksPerSm : kFwdUncachedBlocksPerSm)
    norm_fwd_kernel(NormFwdArgs a) {
  const int lane = threadIdx.x & 31;
  const int64_t row = blockIdx.x * static_cast<int64_t>(kWarps) + (threadIdx.x >> 5);
  if (row >= a.rows) return;
  if constexpr (R > 0)
    norm_fwd_cached<T, V, R>(a, row, static_cast<int64_t>(gridDim.x) * kWarps, lane);
  else
    norm_fwd_uncached<T, V>(a, row, lane);
}

// Columns padded to whole 32-lane chunks, the length of a warp's shared-memory partials.
__host__ __device__ inline int64_t padded_cols(int64_t cols, int v) {
  return round_up(cols, 32 * v);
}

// Where column j's partial lives: lanes of a warp touch consecutive slots for each element k of
// their V-wide chunks (column-major would put the lanes V slots apart, a V-way bank conflict).
// Element k of the chunk at j (j % V == 0) is at partial_slot(j) + 32 k.
template <int V>
__device__ __forceinline__ int64_t partial_slot(int64_t j) {
  return ((j / (32 * V)) * V + j % V) * 32 + (j / V) % 32;
}

// One element's contributions to the (dgamma, dbeta) partials, kept side by side in a float2:
// one shared-memory read and write, and no aliasing between two arrays to serialise them.
__device__ __forceinline__ void add_partial(float2* p, float dv, float xhat) {
  float2 t = *p;
  t.x += dv * xhat;
  t.y += dv;
  *p = t;
}

// What the backward's dx adds to: its old value (accumulate), the skip gradient (residual), or
// nothing (nullptr).
template <class T>
__device__ __forceinline__ const T* dx_base(const NormBwdArgs& a) {
  return static_cast<const T*>(a.accumulate ? a.out : a.d_sum);
}

// Backward, first pass over a chunk: the row sums of dxhat and dxhat * xhat, and this warp's
// (dgamma, dbeta) partials of the chunk's columns (element k at p + 32 k).
template <int V>
__device__ __forceinline__ void add_chunk_stats(const float (&xv)[V], const float (&dv)[V],
                                                const float (&gv)[V], float mean, float rstd,
                                                float2* p, float& s1, float& s2) {
#pragma unroll
  for (int k = 0; k < V; ++k) {
    const float xhat = (xv[k] - mean) * rstd;
    const float dxhat = dv[k] * gv[k];
    s1 += dxhat;
    s2 += dxhat * xhat;
    add_partial(p + 32 * k, dv[k], xhat);
  }
}

// The mean of a row's dxhat, the mean term of dx: none for RMSNorm, whose mean is 0, not an
// input.
__device__ __forceinline__ float row_m1(const NormBwdArgs& a, float s1) {
  return a.rms ? 0.0f : warp_sum(s1) / static_cast<float>(a.width);
}

// Backward, second pass over the chunk at element `at`: out = o + dx (o holds the base), and
// d_drop = dropout(out) when there is one.
template <class T, int V>
__device__ __forceinline__ void store_dx_chunk(const NormBwdArgs& a, int64_t at, int64_t col,
                                               const float (&xv)[V], const float (&dv)[V],
                                               const float (&gv)[V], float mean, float rstd,
                                               float m1, float m2, float (&o)[V]) {
  // Padding columns get nothing added (the formula would give them -rstd (m1 + xhat m2)).
  const bool padded = col + V > a.width;
#pragma unroll
  for (int k = 0; k < V; ++k) {
    const float xhat = (xv[k] - mean) * rstd;
    const float g = rstd * (dv[k] * gv[k] - m1 - xhat * m2);
    o[k] = round_to<T>(padded && col + k >= a.width ? o[k] : o[k] + g);
  }
  store_floats<T, V>(static_cast<T*>(a.out) + at, o);
  if (!a.d_drop) return;
  if (a.drop.active()) {
    float f[V];
    chunk_dropout<V>(a.drop, at, f);
#pragma unroll
    for (int k = 0; k < V; ++k) o[k] = f[k] == 0.0f ? 0.0f : o[k] * f[k];
  }
  store_floats<T, V>(static_cast<T*>(a.d_drop) + at, o);
}

// Rows held in registers (R chunks per lane). gamma is loaded once; the next row's x, dy,
// base, mean and rstd are loaded while this row computes (they are copied to "current"
// registers first, so both rows' packed values are live).
template <class T, int V, int R>
__device__ __forceinline__ void norm_bwd_cached(const NormBwdArgs& a, int64_t row, int64_t end,
                                                int lane, float2* part) {
  const int64_t n = a.cols;
  const T* x = static_cast<const T*>(a.x);
  const T* dy = static_cast<const T*>(a.dy);
  const T* base_src = dx_base<T>(a);
  uint4 gp[R];
#pragma unroll
  for (int it = 0; it < R; ++it) {
    const int64_t j = chunk_col<V>(it, lane);
    if (j < n) gp[it] = load_raw<T>(static_cast<const T*>(a.gamma) + j);
  }
  uint4 xp[R], dp[R], op[R];  // the row loaded next
  float mean_next = 0.0f, rstd_next = 0.0f;
  auto load_row = [&](int64_t r) {
#pragma unroll
    for (int it = 0; it < R; ++it) {
      const int64_t j = chunk_col<V>(it, lane);
      if (j < n) {
        xp[it] = load_raw<T>(x + r * n + j);
        dp[it] = load_raw<T>(dy + r * n + j);
        if (base_src) op[it] = load_raw<T>(base_src + r * n + j);
      }
    }
    mean_next = a.rms ? 0.0f : a.mean[r];
    rstd_next = a.rstd[r];
  };
  load_row(row);
  for (; row < end; row += kWarps) {
    const int64_t base = row * n;
    uint4 xc[R], dc[R], oc[R];
#pragma unroll
    for (int it = 0; it < R; ++it) {
      if (chunk_col<V>(it, lane) >= n) continue;
      xc[it] = xp[it];
      dc[it] = dp[it];
      if (base_src) oc[it] = op[it];
    }
    const float mean = mean_next, rstd = rstd_next;
    // Rows are disjoint, so these loads may pass this row's stores (`out` may alias dy or
    // d_sum, or be the accumulated base).
    if (row + kWarps < end) load_row(row + kWarps);
    float s1 = 0.0f, s2 = 0.0f;
#pragma unroll
    for (int it = 0; it < R; ++it) {
      const int64_t j = chunk_col<V>(it, lane);
      if (j >= n) continue;
      opaque(gp[it]);
      float xv[V], dv[V], gv[V];
      unpack<T, V>(xc[it], xv);
      unpack<T, V>(dc[it], dv);
      unpack<T, V>(gp[it], gv);
      add_chunk_stats<V>(xv, dv, gv, mean, rstd, part + partial_slot<V>(j), s1, s2);
    }
    const float m1 = row_m1(a, s1);
    const float m2 = warp_sum(s2) / static_cast<float>(a.width);
#pragma unroll
    for (int it = 0; it < R; ++it) {
      const int64_t j = chunk_col<V>(it, lane);
      if (j >= n) continue;
      opaque(gp[it]);
      opaque(xc[it]);
      opaque(dc[it]);
      float xv[V], dv[V], gv[V], o[V];
      unpack<T, V>(xc[it], xv);
      unpack<T, V>(dc[it], dv);
      unpack<T, V>(gp[it], gv);
      if (base_src) {
        unpack<T, V>(oc[it], o);
      } else {
#pragma unroll
        for (int k = 0; k < V; ++k) o[k] = 0.0f;
      }
      store_dx_chunk<T, V>(a, base + j, j, xv, dv, gv, mean, rstd, m1, m2, o);
    }
  }
}

// Rows too wide for registers (or unaligned, V = 1): pass 2 re-reads x and dy.
template <class T, int V>
__device__ __forceinline__ void norm_bwd_uncached(const NormBwdArgs& a, int64_t row, int64_t end,
                                                  int lane, float2* part) {
  const int64_t n = a.cols;
  const T* gamma = static_cast<const T*>(a.gamma);
  const T* base_src = dx_base<T>(a);
  for (; row < end; row += kWarps) {
    const int64_t base = row * n;
    const T* x = static_cast<const T*>(a.x) + base;
    const T* dy = static_cast<const T*>(a.dy) + base;
    const float mean = a.rms ? 0.0f : a.mean[row], rstd = a.rstd[row];
    float s1 = 0.0f, s2 = 0.0f;
    for (int64_t j = lane * V; j < n; j += 32 * V) {
      float xv[V], dv[V], gv[V];
      load_floats<T, V>(x + j, xv);
      load_floats<T, V>(dy + j, dv);
      load_floats<T, V>(gamma + j, gv);
      add_chunk_stats<V>(xv, dv, gv, mean, rstd, part + partial_slot<V>(j), s1, s2);
    }
    const float m1 = row_m1(a, s1);
    const float m2 = warp_sum(s2) / static_cast<float>(a.width);
    for (int64_t j = lane * V; j < n; j += 32 * V) {
      float xv[V], dv[V], gv[V], o[V];
      load_floats<T, V>(x + j, xv);
      load_floats<T, V>(dy + j, dv);
      load_floats<T, V>(gamma + j, gv);
      if (base_src) {
        load_floats<T, V>(base_src + base + j, o);
      } else {
#pragma unroll
        for (int k = 0; k < V; ++k) o[k] = 0.0f;
      }
      store_dx_chunk<T, V>(a, base + j, j, xv, dv, gv, mean, rstd, m1, m2, o);
    }
  }
}

// Columns of a block's row of partial sums: dgamma, then dbeta unless RMSNorm.
__host__ __device__ inline int64_t norm_partials(bool rms, int64_t cols) {
  return rms ? cols : 2 * cols;
}

// A block takes rows [blockIdx.x * rows_per_block, + rows_per_block), its warps every
// kWarps-th of them; then it sums its warps' partials into its row of the scratch.
template <class T, int V, int R>
__global__ void __launch_bounds__(kThreads, R > 0 ? kBwdBlocksPerSm : kBwdUncachedBlocksPerSm)
    norm_bwd_kernel(NormBwdArgs a, int64_t rows_per_block) {
  extern __shared__ float2 partials[];  // [kWarps][padded cols]: (dgamma, dbeta) per warp
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int64_t n = a.cols, np = padded_cols(n, V);
  float2* part = partials + static_cast<int64_t>(warp) * np;
  for (int64_t j = lane; j < np; j += 32) part[j] = make_float2(0.0f, 0.0f);
  __syncwarp();
  const int64_t r0 = blockIdx.x * rows_per_block;
  const int64_t end = r0 + rows_per_block < a.rows ? r0 + rows_per_block : a.rows;
  if (r0 + warp < end) {
    if constexpr (R > 0)
      norm_bwd_cached<T, V, R>(a, r0 + warp, end, lane, part);
    else
      norm_bwd_uncached<T, V>(a, r0 + warp, end, lane, part);
  }
  __syncthreads();
  const int64_t parts = norm_partials(a.rms, n);  // RMSNorm: no dbeta
  float* dst = a.scratch + blockIdx.x * parts;
  for (int64_t j = threadIdx.x; j < parts; j += kThreads) {
    const bool beta = j >= n;
    const int64_t slot = partial_slot<V>(beta ? j - n : j);
    float s = 0.0f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      const float2 p = partials[w * np + slot];
      s += beta ? p.y : p.x;
    }
    dst[j] = s;
  }
}

template <class T, int V>
__global__ void residual_bwd_plain_kernel(const T* dsum, T* dres, T* dx, int64_t n, DropArgs d) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x * V;
  for (int64_t i = (blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x) * V; i < n;
       i += stride) {
    if (i + V <= n) {
      float g[V];
      if (dsum) {
        load_floats<T, V>(dsum + i, g);
      } else {
#pragma unroll
        for (int k = 0; k < V; ++k) g[k] = 0.0f;
      }
      if (dres != dsum) store_floats<T, V>(dres + i, g);
      if (d.active()) {
        float f[V];
        dropout_factors<V>(d.seed, static_cast<uint64_t>(i), d.p, d.scale, f);
#pragma unroll
        for (int k = 0; k < V; ++k) g[k] = f[k] == 0.0f ? 0.0f : g[k] * f[k];
      }
      store_floats<T, V>(dx + i, g);
    } else {
      for (int64_t j = i; j < n; ++j) {
        const float g = dsum ? to_f<T>(dsum[j]) : 0.0f;
        if (dres != dsum) dres[j] = from_f<T>(g);
        const float f =
            d.active() ? dropout_factor(d.seed, static_cast<uint64_t>(j), d.p, d.scale) : 1.0f;
        dx[j] = from_f<T>(f == 0.0f ? 0.0f : g * f);
      }
    }
  }
}

size_t norm_bwd_smem(int64_t cols) {  // the widest padding (V = 8) for any dtype's launch
  return static_cast<size_t>(kWarps) * 2 * static_cast<size_t>(padded_cols(cols, 8)) *
         sizeof(float);
}

// One block per kWarps rows, at most `per_sm` (or as many as the partials' shared memory
// allows) per multiprocessor. Every block adds one partial row to the finishing sum.
int norm_bwd_blocks(const Launch& l, int64_t rows, int64_t cols, int per_sm) {
  const int64_t by_rows = ceil_div(rows, kWarps);
  const int64_t by_smem = static_cast<int64_t>(200 * 1024 / norm_bwd_smem(cols));
  const int64_t cap = (by_smem < 1 ? 1 : by_smem < per_sm ? by_smem : per_sm) * l.sms;
  return static_cast<int>(by_rows < cap ? (by_rows > 0 ? by_rows : 1) : cap);
}

bool vec_ok(int64_t cols, int v, std::initializer_list<const void*> ptrs) {
  if (cols % v != 0) return false;
  for (const void* p : ptrs)
    if (p && !aligned16(p)) return false;
  return true;
}

template <class T>
void norm_forward_typed(const Launch& l, const NormFwdArgs& a) {
  constexpr int V = kVec16<T>;
  const int64_t by_rows = ceil_div(a.rows, kWarps);
  const int64_t cap = static_cast<int64_t>(kFwdBlocksPerSm) * l.sms;
  const unsigned grid = static_cast<unsigned>(by_rows);
  if (!vec_ok(a.cols, V, {a.x, a.residual, a.sum, a.gamma, a.beta, a.y}))
    norm_fwd_kernel<T, 1, 0><<<grid, kThreads, 0, l.stream>>>(a);
  else if (a.cols <= kCacheChunks * 32 * V)
    norm_fwd_kernel<T, V, kCacheChunks>
        <<<static_cast<unsigned>(by_rows < cap ? by_rows : cap), kThreads, 0, l.stream>>>(a);
  else
    norm_fwd_kernel<T, V, 0><<<grid, kThreads, 0, l.stream>>>(a);
}

template <class T, int V, int R>
void norm_backward_launch(const Launch& l, const NormBwdArgs& a) {
  const int blocks =
      norm_bwd_blocks(l, a.rows, a.cols, R > 0 ? kBwdBlocksPerSm : kBwdUncachedBlocksPerSm);
  const int64_t rows_per_block = ceil_div(a.rows, blocks);
  const size_t smem = norm_bwd_smem(a.cols);
  if (smem > 48 * 1024)
    cudaFuncSetAttribute(norm_bwd_kernel<T, V, R>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                         static_cast<int>(smem));
  norm_bwd_kernel<T, V, R><<<blocks, kThreads, smem, l.stream>>>(a, rows_per_block);
  add_column_sums(l, a.scratch, blocks, norm_partials(a.rms, a.cols), a.cols, a.dgamma, a.dbeta);
}

template <class T>
void norm_backward_typed(const Launch& l, const NormBwdArgs& a) {
  constexpr int V = kVec16<T>;
  if (!vec_ok(a.cols, V, {a.x, a.gamma, a.dy, a.d_sum, a.out, a.d_drop}))
    norm_backward_launch<T, 1, 0>(l, a);
  else if (a.cols <= kCacheChunks * 32 * V)
    norm_backward_launch<T, V, kCacheChunks>(l, a);
  else
    norm_backward_launch<T, V, 0>(l, a);
}

template <class T>
void residual_plain_typed(const Launch& l, const void* d_sum, void* d_res, void* d_x, int64_t n,
                          DropArgs d) {
  constexpr int V = kVec16<T>;
  const T* s = static_cast<const T*>(d_sum);
  T *r = static_cast<T*>(d_res), *x = static_cast<T*>(d_x);
  const int64_t blocks_max = 8LL * l.sms;
  if ((!d_sum || aligned16(d_sum)) && aligned16(d_res) && aligned16(d_x)) {
    int64_t blocks = (n / V + kThreads) / kThreads;
    residual_bwd_plain_kernel<T, V>
        <<<static_cast<unsigned>(blocks < blocks_max ? blocks : blocks_max), kThreads, 0,
           l.stream>>>(s, r, x, n, d);
  } else {
    int64_t blocks = ceil_div(n, kThreads);
    residual_bwd_plain_kernel<T, 1>
        <<<static_cast<unsigned>(blocks < blocks_max ? blocks : blocks_max), kThreads, 0,
           l.stream>>>(s, r, x, n, d);
  }
}

}  // namespace

void norm_forward(const Launch& l, const NormFwdArgs& a) {
  if (a.rows == 0) return;
  // Without a norm the sum is elementwise: rows longer than one pass of a warp's 16-byte loads
  // are cut into rows of one pass (the same elements in the same order, so the same dropout
  // draws), a warp each, so that a few long rows (a decode step's one) still spread over the
  // multiprocessors instead of a warp looping over each.
  NormFwdArgs b = a;
  const int64_t pass = 32 * 16 / static_cast<int64_t>(dtype_size(a.dt));
  if (!a.gamma && a.cols > pass && a.cols % pass == 0) {
    b.rows = a.rows * (a.cols / pass);
    b.cols = pass;
  }
  HWT_DISPATCH_FLOAT(b.dt, T, norm_forward_typed<T>(l, b));
}

size_t norm_backward_scratch_bytes(const Launch& l, int64_t rows, int64_t cols) {
  // The launch's path depends on the dtype and alignment: room for the larger grid.
  static_assert(kBwdUncachedBlocksPerSm >= kBwdBlocksPerSm);
  return static_cast<size_t>(norm_bwd_blocks(l, rows, cols, kBwdUncachedBlocksPerSm)) * 2 *
         static_cast<size_t>(cols) * sizeof(float);
}

void norm_backward(const Launch& l, const NormBwdArgs& a) {
  if (a.rows == 0) return;
  HWT_DISPATCH_FLOAT(a.dt, T, norm_backward_typed<T>(l, a));
}

void residual_backward_plain(const Launch& l, DType dt, const void* d_sum, void* d_res, void* d_x,
                             int64_t n, DropArgs d) {
  if (n == 0) return;
  HWT_DISPATCH_FLOAT(dt, T, residual_plain_typed<T>(l, d_sum, d_res, d_x, n, d));
}

}  // namespace hwt::cuda
