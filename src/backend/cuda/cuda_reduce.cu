// Deterministic sums over a whole tensor: a fixed grid accumulates per-block partials in
// double precision, then one block adds the partials in order. And the column sums of the
// partial-sum matrices that bias and layernorm gradients leave behind.
#include "backend/cuda/cuda_common.cuh"
#include "backend/cuda/cuda_kernels.h"
#include "core/integer_math.h"

namespace hwt::cuda {
namespace {

template <class T, int V, bool kSquares>
__global__ void partial_sums(const T* x, int64_t n, double* partials) {
  __shared__ double shared[32];
  double acc = 0.0;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x * V;
  for (int64_t i = (blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x) * V; i < n;
       i += stride) {
    if (i + V <= n) {
      float v[V];
      load_floats<T, V>(x + i, v);
#pragma unroll
      for (int k = 0; k < V; ++k) acc += kSquares ? static_cast<double>(v[k]) * v[k] : v[k];
    } else {
      for (int64_t j = i; j < n; ++j) {
        const double v = to_f<T>(x[j]);
        acc += kSquares ? v * v : v;
      }
    }
  }
  acc = block_sum(acc, shared);
  if (threadIdx.x == 0) partials[blockIdx.x] = acc;
}

__global__ void finish_sum(const double* partials, int count, float* out) {
  __shared__ double shared[32];
  double acc = 0.0;
  for (int i = threadIdx.x; i < count; i += blockDim.x) acc += partials[i];
  acc = block_sum(acc, shared);
  if (threadIdx.x == 0) out[0] = static_cast<float>(acc);
}

template <class T>
void reduce_typed(const Launch& l, const void* x, int64_t n, bool squares, float* out,
                  double* partials) {
  constexpr int V = kVec16<T>;
  const bool vec = aligned16(x);
  const int64_t per_block = static_cast<int64_t>(kBlockThreads) * (vec ? V : 1) * 4;
  int blocks = static_cast<int>(ceil_div(n, per_block));
  blocks = blocks < 1 ? 1 : (blocks > kReduceBlocks ? kReduceBlocks : blocks);
  const T* px = static_cast<const T*>(x);
  if (vec) {
    if (squares)
      partial_sums<T, V, true><<<blocks, kBlockThreads, 0, l.stream>>>(px, n, partials);
    else
      partial_sums<T, V, false><<<blocks, kBlockThreads, 0, l.stream>>>(px, n, partials);
  } else {
    if (squares)
      partial_sums<T, 1, true><<<blocks, kBlockThreads, 0, l.stream>>>(px, n, partials);
    else
      partial_sums<T, 1, false><<<blocks, kBlockThreads, 0, l.stream>>>(px, n, partials);
  }
  finish_sum<<<1, 1024, 0, l.stream>>>(partials, blocks, out);
}

// A block owns 32 columns; its 32 rows of threads sum every 32nd partial row, four rows in
// flight per thread, then thread row 0 adds the 32 sums in order.
constexpr int kColumnGroupRows = 32;
__global__ void __launch_bounds__(32 * kColumnGroupRows)
    column_sums_kernel(const float* partials, int64_t rows, int64_t cols, int64_t split,
                       float* out_lo, float* out_hi) {
  __shared__ float sums[kColumnGroupRows][33];
  const int64_t c = blockIdx.x * 32LL + threadIdx.x;
  constexpr int kStep = kColumnGroupRows;
  float s[4] = {};
  if (c < cols) {
    const float* p = partials + c;
    int64_t r = threadIdx.y;
    for (; r + 3 * kStep < rows; r += 4 * kStep) {
#pragma unroll
      for (int u = 0; u < 4; ++u) s[u] += p[(r + u * kStep) * cols];
    }
    for (; r < rows; r += kStep) s[0] += p[r * cols];
  }
  sums[threadIdx.y][threadIdx.x] = (s[0] + s[1]) + (s[2] + s[3]);
  __syncthreads();
  if (threadIdx.y != 0 || c >= cols) return;
  float total = 0.0f;
  for (int k = 0; k < kColumnGroupRows; ++k) total += sums[k][threadIdx.x];
  if (c < split)
    out_lo[c] += total;
  else
    out_hi[c - split] += total;
}

}  // namespace

void add_column_sums(const Launch& l, const float* partials, int64_t rows, int64_t cols,
                     int64_t split, float* out_lo, float* out_hi) {
  if (cols == 0) return;
  column_sums_kernel<<<static_cast<unsigned>(ceil_div(cols, 32)), dim3(32, kColumnGroupRows), 0,
                       l.stream>>>(partials, rows, cols, split, out_lo, out_hi);
}

void reduce_sum(const Launch& l, DType dt, const void* x, int64_t n, bool squares, float* out,
                double* partials) {
  HWT_DISPATCH_FLOAT(dt, T, reduce_typed<T>(l, x, n, squares, out, partials));
}

}  // namespace hwt::cuda
