// y = act(x · wᵀ + bias) for one row x: a batch-1 decode step's linear layers, where the product
// is a matrix-vector one and its time is that of reading w once. A tiled GEMM spends a 64- or
// 128-row tile on the one row; here one warp owns four output columns and streams their rows of
// w through shared memory with cp.async, each lane kStages - 1 16-byte chunks of every row ahead
// of the one it multiplies: enough bytes in flight to keep HBM busy with three blocks a
// multiprocessor and 48 registers a thread, where loads into registers held one or two chunks a
// row at 164 registers (docs/benchmarks.md: 8B decode 161.7 -> 174.2 tokens/s on an H100). Each
// lane reads back only the chunks it copied, so the ring needs no barrier, only its own cp.async
// groups. x is held in shared memory as T (one read serves four columns), and each warp reduces
// its sums with shuffles; where that leaves multiprocessors idle, a block's warps split k
// instead. Under a dependent launch (GemvArgs::dependent) its first chunks of w are requested
// while the kernel before it, which computes x, still runs. Accumulation is fp32; the bias and
// activation are applied to the fp32 sum as cuBLASLt's epilogues do. Where it is used
// (gemv_fits) follows from timing it against cuBLASLt inside CUDA graphs (`bench_kernels "decode
// linear"`): at one row for k up to 4096 level with it or ahead, while its fused forms (norm,
// gating, residual) spare the separate kernels cuBLASLt would need; behind for Llama-3-8B's
// down product (k = 14336: 46.9 against 42.1 µs on an H100) and for more rows (the multiply-adds
// per weight byte grow with the rows).
#include "backend/cuda/cuda_common.cuh"
#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/cuda_mma.cuh"
#include "core/activation_math.h"
#include "core/integer_math.h"

namespace hwt::cuda {
namespace {

constexpr int kWarps = 4;            // warps per block
constexpr int kCols = 4;             // output columns per warp
constexpr int kStages = 8;           // 16-byte chunks of each row a lane has in its ring
constexpr int64_t kMaxGemvK = 4096;  // see above

// A block's shared memory: x as T in whole 16-byte chunks, then each warp's ring of kStages x
// kCols x 32 chunks.
template <class T>
__host__ __device__ constexpr size_t x_bytes(int64_t k) {
  return (static_cast<size_t>(k) * sizeof(T) + 15) & ~size_t{15};
}
constexpr size_t kRingBytes = size_t{kWarps} * kStages * kCols * 32 * 16;

// x into shared memory as T, normalised there when the product takes a norm: the statistics come
// from the copy in shared memory (two passes, as norm_forward's), and each thread normalises the
// chunks it copied, rounded to T as the norm would have stored them.
template <class T>
__device__ __forceinline__ void stage_x(const GemvArgs& a, T* sx) {
  constexpr int V = kVec16<T>;
  __shared__ float red[32];
  const int64_t k = a.k, step = int64_t{blockDim.x} * V;
  float s = 0.0f;
  for (int64_t c = threadIdx.x * V; c < k; c += step) {
    const Pack<T, V> p = load_pack<T, V>(static_cast<const T*>(a.x) + c);
    store_pack<T, V>(sx + c, p);
#pragma unroll
    for (int e = 0; e < V; ++e) s += to_f<T>(p.v[e]);
  }
  if (a.gamma != nullptr) {
    const float width = static_cast<float>(a.width);
    const float mean = a.rms ? 0.0f : block_sum(s, red) / width;
    float q = 0.0f;
    for (int64_t c = threadIdx.x * V; c < k; c += step) {
      const Pack<T, V> p = load_pack<T, V>(sx + c);
#pragma unroll
      for (int e = 0; e < V; ++e) q += (to_f<T>(p.v[e]) - mean) * (to_f<T>(p.v[e]) - mean);
    }
    q = block_sum(q, red) - static_cast<float>(k - a.width) * mean * mean;  // padding columns
    const float rstd = 1.0f / sqrtf(q / width + a.eps);
    for (int64_t c = threadIdx.x * V; c < k; c += step) {
      const Pack<T, V> p = load_pack<T, V>(sx + c);
      const Pack<T, V> g = load_pack<T, V>(static_cast<const T*>(a.gamma) + c);
      Pack<T, V> b{};
      if (!a.rms) b = load_pack<T, V>(static_cast<const T*>(a.beta) + c);
      Pack<T, V> o;
#pragma unroll
      for (int e = 0; e < V; ++e)
        o.v[e] = from_f<T>((to_f<T>(p.v[e]) - mean) * rstd * to_f<T>(g.v[e]) +
                           (a.rms ? 0.0f : to_f<T>(b.v[e])));
      store_pack<T, V>(sx + c, o);
    }
  }
  __syncthreads();
}

// With Split warps to a column set, the block's warps share kCols rows of w, each summing a
// 1/Split slice of k, and add their sums in shared memory: a layer with few output columns
// (attention out, the MLP's second product) then still has a block per multiprocessor or more.
// Gated, a warp's rows are two gate rows and their two up rows (kCols / 2 outputs).
template <class T, int Split, bool Gated>
__global__ void __launch_bounds__(32 * kWarps) gemv_kernel(GemvArgs a, int64_t prefetch_blocks) {
  constexpr int V = kVec16<T>;
  constexpr int kOut = Gated ? kCols / 2 : kCols;  // outputs per column set
  constexpr int64_t kStep = 32 * V;                // elements of a row a warp takes at once
  extern __shared__ __align__(16) unsigned char smem[];
  const int64_t k = a.k;
  T* sx = reinterpret_cast<T*>(smem);  // [k]
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  // This lane's ring: chunk (stage, row j) at ring[(stage * kCols + j) * 32], lanes side by side.
  uint4* ring = reinterpret_cast<uint4*>(smem + x_bytes<T>(k)) + warp * kStages * kCols * 32 + lane;
  const int64_t o0 = (blockIdx.x * int64_t{kWarps / Split} + warp / Split) * kOut;
  const bool live = o0 < a.n;
  // Row j of this warp's set of w, and whether it exists.
  auto row = [&](int j) { return Gated && j >= kOut ? a.n + o0 + j - kOut : o0 + j; };
  auto has = [&](int j) { return o0 + (Gated ? j % kOut : j) < a.n; };
  const int64_t slice = k / Split, start = (warp % Split) * slice;  // gemv_split: whole chunks
  const int64_t end = start + slice;
  const T* w = static_cast<const T*>(a.w);
  // The chunks at warp offset `base` into ring stage `stage`, as one cp.async group (empty past
  // the slice's end, so that every iteration waits on the same count).
  auto request = [&](int64_t base, int stage) {
    const int64_t c = base + lane * V;
    if (live && c < end)
#pragma unroll
      for (int j = 0; j < kCols; ++j)
        if (has(j)) cp_async16(ring + (stage * kCols + j) * 32, w + row(j) * k + c, 16);
    cp_async_commit();
  };
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) request(start + s * kStep, s);
  // The rest of the warp's rows into L2, one request per 128-byte line, while the grid ahead
  // (under a dependent launch) still computes x: by the first blocks only, whose rows together
  // fill at most half of L2, lest lines prefetched for later blocks evict those of earlier ones
  // before they are read.
  constexpr int kLine = 128 / (V * static_cast<int>(sizeof(T)));
  if (live && blockIdx.x < prefetch_blocks && lane % kLine == 0)
#pragma unroll
    for (int j = 0; j < kCols; ++j)
      if (has(j))
        for (int64_t p = start + (kStages - 1) * kStep + lane * V; p < end; p += kStep)
          asm volatile("prefetch.global.L2 [%0];" ::"l"(w + row(j) * k + p));
  wait_prior_grid();
  release_next_grid();
  stage_x<T>(a, sx);
  float acc[kCols] = {};
  int stage = 0;
  for (int64_t base = start; base < end && live; base += kStep) {
    // The stage refilled now is the one this lane read last iteration.
    asm volatile("" ::: "memory");
    request(base + (kStages - 1) * kStep, stage == 0 ? kStages - 1 : stage - 1);
    cp_async_wait<kStages - 1>();
    const int64_t c = base + lane * V;
    if (c < end) {
      float xv[V];
      load_floats<T, V>(sx + c, xv);
#pragma unroll
      for (int j = 0; j < kCols; ++j) {
        const Pack<T, V> wp = *reinterpret_cast<const Pack<T, V>*>(ring + (stage * kCols + j) * 32);
#pragma unroll
        for (int e = 0; e < V; ++e) acc[j] += to_f<T>(wp.v[e]) * xv[e];
      }
    }
    stage = stage == kStages - 1 ? 0 : stage + 1;
  }
  cp_async_wait_all();  // the empty groups past the end, before the block may exit
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

// Launches the kernel with its shared memory, which passes the default 48 KB.
template <class T, int Split, bool Gated>
void gemv_grid(const Launch& l, const GemvArgs& a, int64_t blocks, int64_t prefetch_blocks) {
  auto* kernel = gemv_kernel<T, Split, Gated>;
  const size_t smem = x_bytes<T>(a.k) + kRingBytes;
  cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
  launch_kernel(l, a.dependent, kernel, static_cast<unsigned>(blocks), 32 * kWarps, smem, a,
                prefetch_blocks);
}

template <class T, bool Gated>
void gemv_launch(const Launch& l, const GemvArgs& a) {
  const int64_t sets = ceil_div(a.n, int64_t{Gated ? kCols / 2 : kCols});
  const int64_t row_bytes = a.k * static_cast<int64_t>(sizeof(T));
  if (gemv_split<T>(l, sets, a.k))
    gemv_grid<T, kWarps, Gated>(l, a, sets, l.l2_bytes / 2 / (kCols * row_bytes));
  else
    gemv_grid<T, 1, Gated>(l, a, ceil_div(sets, int64_t{kWarps}),
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
