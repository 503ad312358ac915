// y = act(x · wᵀ + bias) for one row x: a batch-1 decode step's linear layers, where the product
// is a matrix-vector one and its time is that of reading w once. A tiled GEMM spends a 64- or
// 128-row tile on the one row; here one warp owns four output columns and streams their rows of
// w in 16-byte loads (four in flight per lane), x held in shared memory as fp32 (one read of x
// serves four columns), and reduces its sums with shuffles; where that leaves multiprocessors
// idle, a block's warps split k instead. Under a dependent launch (GemvArgs::dependent) its loads
// of w begin while the kernel before it, which computes x, still runs. Accumulation is fp32; the
// bias and activation are applied to the fp32 sum as cuBLASLt's epilogues do. Where it is used
// (gemv_fits) follows from timing it against cuBLASLt inside CUDA graphs
// (`bench_kernels "decode linear"`, docs/benchmarks.md): at one row for k up to 4096 level with
// it or up to 10% behind on a plain product read from memory, while its fused forms (norm,
// gating, residual) spare the separate kernels cuBLASLt would need; behind for longer rows (one
// warp's loop over k grows, and x's share of shared memory caps the warps in flight) and for
// more rows (the multiply-adds per weight byte grow with the rows).
#include "backend/cuda/cuda_common.cuh"
#include "backend/cuda/cuda_kernels.h"
#include "core/activation_math.h"
#include "core/integer_math.h"

namespace hwt::cuda {
namespace {

constexpr int kWarps = 4;            // warps per block
constexpr int kCols = 4;             // output columns per warp
constexpr int64_t kMaxGemvK = 4096;  // see above

// x into shared memory as fp32: each thread loads its 16-byte chunks (and, with a norm, gamma's
// and beta's) at once; the norm's statistics come from those registers (two passes, as
// norm_forward's), and x is normalised on its way to shared memory, rounded to T as the norm
// would have stored it.
template <class T>
__device__ __forceinline__ void stage_x(const GemvArgs& a, float* sx) {
  constexpr int V = kVec16<T>;
  constexpr int kPasses = static_cast<int>(kMaxGemvK / (32 * kWarps * V));
  __shared__ float red[32];
  const int64_t k = a.k;
  const bool norm = a.gamma != nullptr;
  float xv[kPasses][V];
  Pack<T, V> gp[kPasses], bp[kPasses];
#pragma unroll
  for (int p = 0; p < kPasses; ++p) {
    const int64_t c = (threadIdx.x + int64_t{p} * blockDim.x) * V;
    if (c >= k) continue;
    load_floats<T, V>(static_cast<const T*>(a.x) + c, xv[p]);
    if (norm) gp[p] = load_pack<T, V>(static_cast<const T*>(a.gamma) + c);
    if (norm && !a.rms) bp[p] = load_pack<T, V>(static_cast<const T*>(a.beta) + c);
  }
  float mean = 0.0f, rstd = 1.0f;
  if (norm) {
    const float width = static_cast<float>(a.width);
    float s = 0.0f, q = 0.0f;
#pragma unroll
    for (int p = 0; p < kPasses; ++p)
      if ((threadIdx.x + int64_t{p} * blockDim.x) * V < k)
#pragma unroll
        for (int e = 0; e < V; ++e) s += xv[p][e];
    if (!a.rms) mean = block_sum(s, red) / width;
#pragma unroll
    for (int p = 0; p < kPasses; ++p)
      if ((threadIdx.x + int64_t{p} * blockDim.x) * V < k)
#pragma unroll
        for (int e = 0; e < V; ++e) q += (xv[p][e] - mean) * (xv[p][e] - mean);
    q = block_sum(q, red) - static_cast<float>(k - a.width) * mean * mean;  // padding columns
    rstd = 1.0f / sqrtf(q / width + a.eps);
  }
#pragma unroll
  for (int p = 0; p < kPasses; ++p) {
    const int64_t c = (threadIdx.x + int64_t{p} * blockDim.x) * V;
    if (c >= k) continue;
    float o[V];
#pragma unroll
    for (int e = 0; e < V; ++e) {
      o[e] = xv[p][e];
      if (norm)
        o[e] = round_to<T>((o[e] - mean) * rstd * to_f<T>(gp[p].v[e]) +
                           (a.rms ? 0.0f : to_f<T>(bp[p].v[e])));
    }
#pragma unroll
    for (int q = 0; q < V; q += 4)
      *reinterpret_cast<float4*>(sx + c + q) = make_float4(o[q], o[q + 1], o[q + 2], o[q + 3]);
  }
  __syncthreads();
}

// With Split warps to a column set, the block's warps share kCols rows of w, each summing a
// 1/Split slice of k, and add their sums in shared memory: a layer with few output columns
// (attention out, the MLP's second product) then still has a block per multiprocessor or more.
// Gated, a warp's rows are two gate rows and their two up rows (kCols / 2 outputs). Each warp
// issues its first loads of w before x is staged, and every later one an iteration ahead.
template <class T, int Split, bool Gated>
__global__ void __launch_bounds__(32 * kWarps) gemv_kernel(GemvArgs a, int64_t prefetch_blocks) {
  constexpr int V = kVec16<T>;
  constexpr int kOut = Gated ? kCols / 2 : kCols;  // outputs per column set
  extern __shared__ __align__(16) unsigned char smem[];
  float* sx = reinterpret_cast<float*>(smem);  // [k]
  const int64_t k = a.k;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int64_t o0 = (blockIdx.x * int64_t{kWarps / Split} + warp / Split) * kOut;
  // Row j of this warp's set of w, and whether it exists.
  auto row = [&](int j) { return Gated && j >= kOut ? a.n + o0 + j - kOut : o0 + j; };
  auto has = [&](int j) { return o0 + (Gated ? j % kOut : j) < a.n; };
  const int64_t slice = k / Split, end = (warp % Split + 1) * slice;  // gemv_split: whole chunks
  const T* w = static_cast<const T*>(a.w);
  auto load_w = [&](int64_t c, Pack<T, V>(&wp)[kCols]) {
#pragma unroll
    for (int j = 0; j < kCols; ++j)
      if (has(j) && c < end) wp[j] = load_pack<T, V>(w + row(j) * k + c);
  };
  Pack<T, V> wp[kCols] = {};
  int64_t c = (warp % Split) * slice + lane * V;
  load_w(c, wp);
  // The rest of the warp's rows into L2, one request per 128-byte line, while the grid ahead
  // (under a dependent launch) still computes x: by the first blocks only, whose rows together
  // fill at most half of L2, lest lines prefetched for later blocks evict those of earlier ones
  // before they are read.
  constexpr int kLine = 128 / (V * static_cast<int>(sizeof(T)));
  if (blockIdx.x < prefetch_blocks && lane % kLine == 0)
#pragma unroll
    for (int j = 0; j < kCols; ++j)
      if (has(j))
        for (int64_t p = c + 32 * V; p < end; p += 32 * V)
          asm volatile("prefetch.global.L2 [%0];" ::"l"(w + row(j) * k + p));
  wait_prior_grid();
  release_next_grid();
  stage_x<T>(a, sx);
  float acc[kCols] = {};
  for (; c < end && o0 < a.n; c += 32 * V) {
    Pack<T, V> next[kCols] = {};
    load_w(c + 32 * V, next);
    float xv[V];
#pragma unroll
    for (int q = 0; q < V; q += 4) {
      const float4 f = *reinterpret_cast<const float4*>(sx + c + q);
      xv[q] = f.x;
      xv[q + 1] = f.y;
      xv[q + 2] = f.z;
      xv[q + 3] = f.w;
    }
#pragma unroll
    for (int j = 0; j < kCols; ++j) {
#pragma unroll
      for (int e = 0; e < V; ++e) acc[j] += to_f<T>(wp[j].v[e]) * xv[e];
      wp[j] = next[j];
    }
  }
#pragma unroll
  for (int j = 0; j < kCols; ++j) acc[j] = warp_sum(acc[j]);
  if constexpr (Split > 1) {
    // The slices' sums, added in a fixed order by the first warp of the column set.
    __shared__ float part[kWarps][kCols];
    if (lane < kCols) {
#pragma unroll
      for (int j = 0; j < kCols; ++j)
        if (j == lane) part[warp][j] = acc[j];
    }
    __syncthreads();
    if (warp % Split != 0) return;
#pragma unroll
    for (int j = 0; j < kCols; ++j) {
      acc[j] = 0.0f;
      for (int s = 0; s < Split; ++s) acc[j] += part[warp + s][j];
    }
  }
  // Lane j writes output o0 + j.
  if (lane >= kOut || o0 + lane >= a.n) return;
  const int64_t o = o0 + lane;
  const T* bias = static_cast<const T*>(a.bias);
  float z = 0.0f, up = 0.0f;
#pragma unroll
  for (int j = 0; j < kOut; ++j)
    if (j == lane) {
      z = acc[j];
      if constexpr (Gated) up = acc[j + kOut];
    }
  if (bias) z += to_f<T>(bias[o]);
  float v = z;
  if constexpr (Gated) {
    // The halves rounded as the product would store them for glu_forward.
    if (bias) up += to_f<T>(bias[a.n + o]);
    v = activate(a.act, round_to<T>(z)) * round_to<T>(up);
  } else if (a.act != Activation::None) {
    v = activate(a.act, z);
    if (a.pre_act) static_cast<T*>(a.pre_act)[o] = from_f<T>(z);
  }
  if (a.residual) v = to_f<T>(static_cast<const T*>(a.residual)[o]) + round_to<T>(v);
  static_cast<T*>(a.y)[o] = from_f<T>(v);
}

// Split k over the warps when the column sets alone would leave multiprocessors idle and the
// slices stay whole 16-byte chunks.
template <class T>
bool gemv_split(const Launch& l, int64_t sets, int64_t k) {
  return ceil_div(sets, int64_t{kWarps}) < l.sms && k % (kWarps * kVec16<T>) == 0;
}

template <class T, bool Gated>
void gemv_launch(const Launch& l, const GemvArgs& a) {
  const size_t smem = sizeof(float) * static_cast<size_t>(a.k);
  const int64_t sets = ceil_div(a.n, int64_t{Gated ? kCols / 2 : kCols});
  const int64_t row_bytes = a.k * static_cast<int64_t>(sizeof(T));
  if (gemv_split<T>(l, sets, a.k)) {
    launch_kernel(l, a.dependent, gemv_kernel<T, kWarps, Gated>, static_cast<unsigned>(sets),
                  32 * kWarps, smem, a, l.l2_bytes / 2 / (kCols * row_bytes));
    return;
  }
  launch_kernel(l, a.dependent, gemv_kernel<T, 1, Gated>,
                static_cast<unsigned>(ceil_div(sets, int64_t{kWarps})), 32 * kWarps, smem, a,
                l.l2_bytes / 2 / (kWarps * kCols * row_bytes));
}

template <class T>
void gemv_typed(const Launch& l, const GemvArgs& a) {
  if (is_gated(a.act))
    gemv_launch<T, true>(l, a);
  else
    gemv_launch<T, false>(l, a);
}

}  // namespace

bool dependent_launch_built() {
  cudaFuncAttributes f{};
  return cudaFuncGetAttributes(&f, gemv_kernel<float, 1, false>) == cudaSuccess &&
         f.ptxVersion >= 90;
}

bool gemv_fits(DType dt, int64_t rows, int64_t k, const void* x, const void* w) {
  const int64_t v = 16 / static_cast<int64_t>(dtype_size(dt));
  return rows == 1 && k % v == 0 && k <= kMaxGemvK && aligned16(w) && aligned16(x);
}

void gemv(const Launch& l, const GemvArgs& a) {
  if (a.n == 0) return;
  HWT_DISPATCH_FLOAT(a.dt, T, gemv_typed<T>(l, a));
}

}  // namespace hwt::cuda
