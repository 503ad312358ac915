// y = act(x · wᵀ + bias) for one row x: a batch-1 decode step's linear layers, where the product
// is a matrix-vector one and its time is that of reading w once. A tiled GEMM spends a 64- or
// 128-row tile on the one row; here one warp owns four output columns and streams their rows of
// w in 16-byte loads (four in flight per lane), x held in shared memory as fp32 (one read of x
// serves four columns), and reduces its sums with shuffles; where that leaves multiprocessors
// idle, a block's warps split k instead. Accumulation is fp32; the bias and activation are
// applied to the fp32 sum as cuBLASLt's epilogues do.
// Where it is used (gemv_fits) follows from timing it against cuBLASLt inside CUDA graphs
// (`bench_kernels "decode linear"`, docs/benchmarks.md): ahead at one row for k up to 4096, behind
// for longer rows (one warp's loop over k grows, and x's share of shared memory caps the warps
// in flight) and for more rows (the multiply-adds per weight byte grow with the rows).
#include "backend/cuda/cuda_common.cuh"
#include "backend/cuda/cuda_kernels.h"
#include "core/activation_math.h"
#include "core/integer_math.h"

namespace hwt::cuda {
namespace {

constexpr int kWarps = 4;            // warps per block
constexpr int kCols = 4;             // output columns per warp
constexpr int64_t kMaxGemvK = 4096;  // see above

// With Split warps to a column set, the block's warps share kCols columns, each summing a
// 1/Split slice of k, and add their sums in shared memory: a layer with few output columns
// (attention out, the MLP's second product) then still has a block per multiprocessor or more.
template <class T, int Split>
__global__ void __launch_bounds__(32 * kWarps) gemv_kernel(GemvArgs a) {
  constexpr int V = kVec16<T>;
  extern __shared__ __align__(16) unsigned char smem[];
  float* sx = reinterpret_cast<float*>(smem);  // [k]
  const T* x = static_cast<const T*>(a.x);
  const int64_t k = a.k;
  // x as fp32, 16 bytes at a time (gemv_fits: k is whole 16-byte chunks).
  for (int64_t c = threadIdx.x * int64_t{V}; c < k; c += blockDim.x * int64_t{V}) {
    float f[V];
    load_floats<T, V>(x + c, f);
#pragma unroll
    for (int q = 0; q < V; q += 4)
      *reinterpret_cast<float4*>(sx + c + q) = make_float4(f[q], f[q + 1], f[q + 2], f[q + 3]);
  }
  __syncthreads();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int64_t n0 = (blockIdx.x * int64_t{kWarps / Split} + warp / Split) * kCols;
  const int64_t slice = k / Split, c0 = (warp % Split) * slice;  // gemv_split: whole chunks
  const T* w = static_cast<const T*>(a.w);
  float acc[kCols] = {};
  for (int64_t c = c0 + lane * V; c < c0 + slice && n0 < a.n; c += 32 * V) {
    Pack<T, V> wp[kCols];
#pragma unroll
    for (int j = 0; j < kCols; ++j)
      if (n0 + j < a.n) wp[j] = load_pack<T, V>(w + (n0 + j) * k + c);
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
    for (int j = 0; j < kCols; ++j)
#pragma unroll
      for (int e = 0; e < V; ++e) acc[j] += to_f<T>(wp[j].v[e]) * xv[e];
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
  // Lane j writes column n0 + j.
  if (lane >= kCols || n0 + lane >= a.n) return;
  float z = 0.0f;
#pragma unroll
  for (int j = 0; j < kCols; ++j)
    if (j == lane) z = acc[j];
  const int64_t n = n0 + lane;
  if (a.bias) z += to_f<T>(static_cast<const T*>(a.bias)[n]);
  T* y = static_cast<T*>(a.y) + n;
  if (a.act == Activation::None) {
    *y = from_f<T>(z);
    return;
  }
  static_cast<T*>(a.pre_act)[n] = from_f<T>(z);
  *y = from_f<T>(activate(a.act, z));
}

// Split k over the warps when the column sets alone would leave multiprocessors idle and the
// slices stay whole 16-byte chunks.
template <class T>
bool gemv_split(const Launch& l, const GemvArgs& a) {
  return ceil_div(a.n, int64_t{kWarps * kCols}) < l.sms && a.k % (kWarps * kVec16<T>) == 0;
}

template <class T>
void gemv_typed(const Launch& l, const GemvArgs& a) {
  const size_t smem = sizeof(float) * static_cast<size_t>(a.k);
  if (gemv_split<T>(l, a)) {
    gemv_kernel<T, kWarps>
        <<<static_cast<unsigned>(ceil_div(a.n, int64_t{kCols})), 32 * kWarps, smem, l.stream>>>(a);
    return;
  }
  gemv_kernel<T, 1><<<static_cast<unsigned>(ceil_div(a.n, int64_t{kWarps * kCols})), 32 * kWarps,
                      smem, l.stream>>>(a);
}

}  // namespace

bool gemv_fits(DType dt, int64_t rows, int64_t k, const void* x, const void* w) {
  const int64_t v = 16 / static_cast<int64_t>(dtype_size(dt));
  return rows == 1 && k % v == 0 && k <= kMaxGemvK && aligned16(w) && aligned16(x);
}

void gemv(const Launch& l, const GemvArgs& a) {
  if (a.n == 0) return;
  HWT_DISPATCH_FLOAT(a.dt, T, gemv_typed<T>(l, a));
}

}  // namespace hwt::cuda
