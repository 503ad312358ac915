// Layernorm and the residual add (+dropout, +layernorm), forward and backward. One warp per
// row with 16-byte accesses; statistics in fp32. Parameter gradients are reduced
// deterministically: warp-private shared-memory partials, then per-block partials in global
// scratch, added in a fixed order by add_column_sums (cuda_reduce.cu).
#include "backend/cuda/cuda_common.cuh"
#include "backend/cuda/cuda_kernels.h"

#include <initializer_list>

namespace hwt::cuda {
namespace {

constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
constexpr int kCacheChunks = 4;  // rows up to 4 x 32 x 16 bytes stay in registers

// Calls f(j, values) for each V-wide chunk j of the row this lane owns. With R > 0 the row
// fits in R chunks per lane and `cache` holds it in registers; with R == 0 chunks are re-read
// from `src` (rows too wide to cache).
template <class T, int V, int R, class F>
__device__ __forceinline__ void for_chunks(int64_t n, int lane, float (&cache)[R > 0 ? R : 1][V],
                                           const T* src, F&& f) {
  if constexpr (R > 0) {
#pragma unroll
    for (int it = 0; it < R; ++it) {
      const int64_t j = (static_cast<int64_t>(it) * 32 + lane) * V;
      if (j < n) f(j, cache[it]);
    }
  } else {
    for (int64_t j = lane * V; j < n; j += 32 * V) {
      float v[V];
      load_floats<T, V>(src + j, v);
      f(j, v);
    }
  }
}

template <class T, int V, int R>
__global__ void __launch_bounds__(kThreads) norm_fwd_kernel(NormFwdArgs a) {
  const int lane = threadIdx.x & 31;
  const int64_t row = blockIdx.x * static_cast<int64_t>(kWarps) + (threadIdx.x >> 5);
  if (row >= a.rows) return;
  const int64_t n = a.cols, base = row * n;
  const bool residual = a.residual != nullptr;
  const T* src = static_cast<const T*>(residual ? a.sum : a.x) + base;
  float cache[R > 0 ? R : 1][V];
  float acc = 0.0f;
  // Pass 1: the row to normalise (residual mode: sum = residual + dropout(x), stored). Loads
  // come first so that the stores to `sum` (which may alias x) do not serialise them.
  auto load = [&](int64_t j, float(&xv)[V], float(&v)[V]) {
    if (residual) {
      load_floats<T, V>(static_cast<const T*>(a.x) + base + j, xv);
      load_floats<T, V>(static_cast<const T*>(a.residual) + base + j, v);
    } else {
      load_floats<T, V>(src + j, v);
    }
  };
  auto combine = [&](int64_t j, float(&xv)[V], float(&v)[V]) {
    if (residual) {
      if (a.drop.active()) {
        float f[V];
        dropout_factors<V>(a.drop.seed, static_cast<uint64_t>(base + j), a.drop.p, a.drop.scale, f);
#pragma unroll
        for (int k = 0; k < V; ++k) xv[k] = f[k] == 0.0f ? 0.0f : xv[k] * f[k];
      }
#pragma unroll
      for (int k = 0; k < V; ++k) v[k] = round_to<T>(v[k] + xv[k]);
      store_floats<T, V>(static_cast<T*>(a.sum) + base + j, v);
    }
#pragma unroll
    for (int k = 0; k < V; ++k) acc += v[k];
  };
  if constexpr (R > 0) {
    float xs[R][V];
#pragma unroll
    for (int it = 0; it < R; ++it) {
      const int64_t j = (static_cast<int64_t>(it) * 32 + lane) * V;
      if (j < n) load(j, xs[it], cache[it]);
    }
#pragma unroll
    for (int it = 0; it < R; ++it) {
      const int64_t j = (static_cast<int64_t>(it) * 32 + lane) * V;
      if (j < n) combine(j, xs[it], cache[it]);
    }
  } else {
    for (int64_t j = lane * V; j < n; j += 32 * V) {
      float xv[V], v[V];
      load(j, xv, v);
      combine(j, xv, v);
    }
  }
  if (!a.gamma) return;
  const float mean = warp_sum(acc) / static_cast<float>(n);
  float var = 0.0f;
  for_chunks<T, V, R>(n, lane, cache, src, [&](int64_t, const float(&v)[V]) {
#pragma unroll
    for (int k = 0; k < V; ++k) var += (v[k] - mean) * (v[k] - mean);
  });
  const float rstd = 1.0f / sqrtf(warp_sum(var) / static_cast<float>(n) + a.eps);
  const T* g = static_cast<const T*>(a.gamma);
  const T* b = static_cast<const T*>(a.beta);
  T* y = static_cast<T*>(a.y) + base;
  for_chunks<T, V, R>(n, lane, cache, src, [&](int64_t j, const float(&v)[V]) {
    float gv[V], bv[V], o[V];
    load_floats<T, V>(g + j, gv);
    load_floats<T, V>(b + j, bv);
#pragma unroll
    for (int k = 0; k < V; ++k) o[k] = (v[k] - mean) * rstd * gv[k] + bv[k];
    store_floats<T, V>(y + j, o);
  });
  if (lane == 0) {
    a.mean[row] = mean;
    a.rstd[row] = rstd;
  }
}

// Columns padded to whole 32-lane chunks, the length of a warp's shared-memory partials.
__host__ __device__ inline int64_t padded_cols(int64_t cols, int v) {
  return (cols + 32 * v - 1) / (32 * v) * (32 * v);
}

// Where column j's partial lives: lanes of a warp touch consecutive words for each element k of
// their V-wide chunks (column-major would put the lanes V words apart, a V-way bank conflict).
template <int V>
__device__ __forceinline__ int64_t partial_slot(int64_t j) {
  return ((j / (32 * V)) * V + j % V) * 32 + (j / V) % 32;
}

template <class T, int V, int R>
__global__ void __launch_bounds__(kThreads) norm_bwd_kernel(NormBwdArgs a, int64_t rows_per_block) {
  extern __shared__ float smem[];  // [kWarps][2][padded cols]: dgamma, dbeta partials per warp
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int64_t n = a.cols, np = padded_cols(n, V);
  float* pg = smem + static_cast<int64_t>(warp) * 2 * np;
  float* pb = pg + np;
  for (int64_t j = lane; j < 2 * np; j += 32) pg[j] = 0.0f;
  __syncwarp();
  const T* gamma = static_cast<const T*>(a.gamma);
  const T* dsum = static_cast<const T*>(a.d_sum);
  T* out = static_cast<T*>(a.out);
  T* ddrop = static_cast<T*>(a.d_drop);
  const int64_t r0 = blockIdx.x * rows_per_block;
  const int64_t r1 = r0 + rows_per_block < a.rows ? r0 + rows_per_block : a.rows;
  for (int64_t row = r0 + warp; row < r1; row += kWarps) {
    const int64_t base = row * n;
    const T* x = static_cast<const T*>(a.x) + base;
    const T* dy = static_cast<const T*>(a.dy) + base;
    const float mean = a.mean[row], rstd = a.rstd[row];
    float xc[R > 0 ? R : 1][V], dc[R > 0 ? R : 1][V], oc[R > 0 ? R : 1][V];
    float s1 = 0.0f, s2 = 0.0f;
    auto pass1 = [&](int64_t j, const float(&xv)[V], const float(&dv)[V]) {
      float gv[V];
      load_floats<T, V>(gamma + j, gv);
#pragma unroll
      for (int k = 0; k < V; ++k) {
        const float xhat = (xv[k] - mean) * rstd;
        const float dxhat = dv[k] * gv[k];
        s1 += dxhat;
        s2 += dxhat * xhat;
        pg[partial_slot<V>(j + k)] += dv[k] * xhat;
        pb[partial_slot<V>(j + k)] += dv[k];
      }
    };
    // What dx adds to: its old value (accumulate), the skip gradient (residual), or nothing.
    auto load_base = [&](int64_t j, float(&o)[V]) {
      if (a.accumulate) {
        load_floats<T, V>(out + base + j, o);
      } else if (dsum) {
        load_floats<T, V>(dsum + base + j, o);
      } else {
#pragma unroll
        for (int k = 0; k < V; ++k) o[k] = 0.0f;
      }
    };
    float m1 = 0.0f, m2 = 0.0f;
    auto pass2 = [&](int64_t j, const float(&xv)[V], const float(&dv)[V], float(&o)[V]) {
      float gv[V];
      load_floats<T, V>(gamma + j, gv);
#pragma unroll
      for (int k = 0; k < V; ++k) {
        const float xhat = (xv[k] - mean) * rstd;
        o[k] = round_to<T>(o[k] + rstd * (dv[k] * gv[k] - m1 - xhat * m2));
      }
      store_floats<T, V>(out + base + j, o);
      if (ddrop) {
        if (a.drop.active()) {
          float f[V];
          dropout_factors<V>(a.drop.seed, static_cast<uint64_t>(base + j), a.drop.p, a.drop.scale,
                             f);
#pragma unroll
          for (int k = 0; k < V; ++k) o[k] = f[k] == 0.0f ? 0.0f : o[k] * f[k];
        }
        store_floats<T, V>(ddrop + base + j, o);
      }
    };
    if constexpr (R > 0) {
#pragma unroll
      for (int it = 0; it < R; ++it) {
        const int64_t j = (static_cast<int64_t>(it) * 32 + lane) * V;
        if (j < n) {  // every load of the row up front: one memory round trip per row
          load_floats<T, V>(x + j, xc[it]);
          load_floats<T, V>(dy + j, dc[it]);
          load_base(j, oc[it]);
          pass1(j, xc[it], dc[it]);
        }
      }
    } else {
      for (int64_t j = lane * V; j < n; j += 32 * V) {
        load_floats<T, V>(x + j, xc[0]);
        load_floats<T, V>(dy + j, dc[0]);
        pass1(j, xc[0], dc[0]);
      }
    }
    m1 = warp_sum(s1) / static_cast<float>(n);
    m2 = warp_sum(s2) / static_cast<float>(n);
    if constexpr (R > 0) {
#pragma unroll
      for (int it = 0; it < R; ++it) {
        const int64_t j = (static_cast<int64_t>(it) * 32 + lane) * V;
        if (j < n) pass2(j, xc[it], dc[it], oc[it]);
      }
    } else {
      for (int64_t j = lane * V; j < n; j += 32 * V) {
        load_floats<T, V>(x + j, xc[0]);
        load_floats<T, V>(dy + j, dc[0]);
        load_base(j, oc[0]);
        pass2(j, xc[0], dc[0], oc[0]);
      }
    }
  }
  __syncthreads();
  float* part = a.scratch + blockIdx.x * 2 * n;
  for (int64_t j = threadIdx.x; j < 2 * n; j += kThreads) {
    const int64_t slot = (j < n ? 0 : np) + partial_slot<V>(j < n ? j : j - n);
    float s = 0.0f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) s += smem[w * 2 * np + slot];
    part[j] = s;
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

// Enough blocks to keep up to 24 warps per multiprocessor streaming rows, as far as their
// shared-memory partials allow; every block adds one partial row to the finishing sum.
int norm_bwd_blocks(const Launch& l, int64_t rows, int64_t cols) {
  const int64_t by_rows = (rows + kWarps - 1) / kWarps;
  const int64_t per_sm = static_cast<int64_t>(200 * 1024 / norm_bwd_smem(cols));
  const int64_t cap = (per_sm < 1 ? 1 : per_sm > 6 ? 6 : per_sm) * l.sms;
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
  const unsigned grid = static_cast<unsigned>((a.rows + kWarps - 1) / kWarps);
  if (!vec_ok(a.cols, V, {a.x, a.residual, a.sum, a.gamma, a.beta, a.y}))
    norm_fwd_kernel<T, 1, 0><<<grid, kThreads, 0, l.stream>>>(a);
  else if (a.cols <= kCacheChunks * 32 * V)
    norm_fwd_kernel<T, V, kCacheChunks><<<grid, kThreads, 0, l.stream>>>(a);
  else
    norm_fwd_kernel<T, V, 0><<<grid, kThreads, 0, l.stream>>>(a);
}

template <class T, int V, int R>
void norm_backward_launch(const Launch& l, const NormBwdArgs& a) {
  const int blocks = norm_bwd_blocks(l, a.rows, a.cols);
  const int64_t rows_per_block = (a.rows + blocks - 1) / blocks;
  const size_t smem = norm_bwd_smem(a.cols);
  if (smem > 48 * 1024)
    cudaFuncSetAttribute(norm_bwd_kernel<T, V, R>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                         static_cast<int>(smem));
  norm_bwd_kernel<T, V, R><<<blocks, kThreads, smem, l.stream>>>(a, rows_per_block);
  add_column_sums(l, a.scratch, blocks, 2 * a.cols, a.cols, a.dgamma, a.dbeta);
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
    int64_t blocks = (n + kThreads - 1) / kThreads;
    residual_bwd_plain_kernel<T, 1>
        <<<static_cast<unsigned>(blocks < blocks_max ? blocks : blocks_max), kThreads, 0,
           l.stream>>>(s, r, x, n, d);
  }
}

}  // namespace

void norm_forward(const Launch& l, const NormFwdArgs& a) {
  if (a.rows == 0) return;
  HWT_DISPATCH_FLOAT(a.dt, T, norm_forward_typed<T>(l, a));
}

size_t norm_backward_scratch_bytes(const Launch& l, int64_t rows, int64_t cols) {
  return static_cast<size_t>(norm_bwd_blocks(l, rows, cols)) * 2 * static_cast<size_t>(cols) *
         sizeof(float);
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
