// Deterministic sums over a whole tensor: a fixed grid accumulates per-block partials in
// double precision, then one block adds the partials in order.
#include "backend/cuda/cuda_common.cuh"
#include "backend/cuda/cuda_kernels.h"

namespace hwt::cuda {
namespace {

constexpr int kThreads = 256;

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
  const int64_t per_block = static_cast<int64_t>(kThreads) * (vec ? V : 1) * 4;
  int blocks = static_cast<int>((n + per_block - 1) / per_block);
  blocks = blocks < 1 ? 1 : (blocks > kReduceBlocks ? kReduceBlocks : blocks);
  const T* px = static_cast<const T*>(x);
  if (vec) {
    if (squares)
      partial_sums<T, V, true><<<blocks, kThreads, 0, l.stream>>>(px, n, partials);
    else
      partial_sums<T, V, false><<<blocks, kThreads, 0, l.stream>>>(px, n, partials);
  } else {
    if (squares)
      partial_sums<T, 1, true><<<blocks, kThreads, 0, l.stream>>>(px, n, partials);
    else
      partial_sums<T, 1, false><<<blocks, kThreads, 0, l.stream>>>(px, n, partials);
  }
  finish_sum<<<1, 1024, 0, l.stream>>>(partials, blocks, out);
}

}  // namespace

void reduce_sum(const Launch& l, DType dt, const void* x, int64_t n, bool squares, float* out,
                double* partials) {
  HWT_DISPATCH_FLOAT(dt, T, reduce_typed<T>(l, x, n, squares, out, partials));
}

}  // namespace hwt::cuda
