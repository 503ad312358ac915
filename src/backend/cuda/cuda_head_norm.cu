// QK-norm: RMSNorm over each q and k head of packed qkv, in place. A warp per head of a row
// (heads are at most a few hundred elements), statistics in fp32. The gammas' gradients are
// reduced deterministically: each warp adds its heads into its own shared-memory row, the
// block sums its warps in order into its row of scratch, and add_column_sums adds the blocks'
// rows in order.
#include <algorithm>

#include "backend/cuda/cuda_common.cuh"
#include "backend/cuda/cuda_kernels.h"
#include "core/integer_math.h"

namespace hwt::cuda {
namespace {

constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
constexpr int kBlocksPerSm = 4;
// The backward's shared memory: two rows of head_dim floats (q's and k's gamma) per warp, at
// most 32 KiB (kHeadNormMaxHeadDim in cuda_kernels.h).

struct HeadAt {
  int64_t row, head;
};

__device__ __forceinline__ HeadAt head_at(const HeadNormArgs& a, int64_t i) {
  return {i / a.normed, i % a.normed};
}

template <class T>
__global__ void __launch_bounds__(kThreads) head_norm_fwd_kernel(HeadNormArgs a) {
  const int lane = threadIdx.x & 31;
  const int64_t total = a.rows * a.normed, step = static_cast<int64_t>(gridDim.x) * kWarps;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kWarps + (threadIdx.x >> 5); i < total;
       i += step) {
    const HeadAt at = head_at(a, i);
    T* x = static_cast<T*>(a.qkv) + at.row * a.cols + at.head * a.head_dim;
    T* keep = static_cast<T*>(a.saved) + i * a.head_dim;
    const T* g = static_cast<const T*>(at.head < a.heads ? a.q_gamma : a.k_gamma);
    float ss = 0.0f;
    for (int64_t j = lane; j < a.width; j += 32) {
      const float v = to_f<T>(x[j]);
      ss += v * v;
    }
    const float rstd = rsqrtf(warp_sum(ss) / static_cast<float>(a.width) + a.eps);
    for (int64_t j = lane; j < a.head_dim; j += 32) {
      const T v = x[j];
      keep[j] = v;
      x[j] = from_f<T>(j < a.width ? to_f<T>(v) * rstd * to_f<T>(g[j]) : 0.0f);
    }
    if (lane == 0) a.rstd[i] = rstd;
  }
}

// dx = rstd (dy γ - x̂ mean(dy γ x̂)) over the head's true width, zero after it; dγ += dy x̂.
template <class T>
__global__ void __launch_bounds__(kThreads) head_norm_bwd_kernel(HeadNormArgs a) {
  extern __shared__ float partials[];  // [kWarps][2 head_dim]: dγ of q, then of k
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int64_t D = a.head_dim, np = 2 * D;
  float* mine = partials + warp * np;
  for (int64_t j = lane; j < np; j += 32) mine[j] = 0.0f;
  // k's half starts at head_dim, not always a multiple of 32: its entries are zeroed by other
  // lanes than the ones that accumulate them (a race compute-sanitizer's racecheck reported).
  __syncwarp();
  const int64_t total = a.rows * a.normed, step = static_cast<int64_t>(gridDim.x) * kWarps;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kWarps + warp; i < total; i += step) {
    const HeadAt at = head_at(a, i);
    T* dy = static_cast<T*>(a.qkv) + at.row * a.cols + at.head * D;
    const T* x = static_cast<const T*>(a.saved) + i * D;
    const bool q = at.head < a.heads;
    const T* g = static_cast<const T*>(q ? a.q_gamma : a.k_gamma);
    float* dg = mine + (q ? 0 : D);
    const float rstd = a.rstd[i];
    float s = 0.0f;
    for (int64_t j = lane; j < a.width; j += 32) {
      const float xhat = to_f<T>(x[j]) * rstd, d = to_f<T>(dy[j]);
      s += d * to_f<T>(g[j]) * xhat;
      dg[j] += d * xhat;
    }
    const float c = warp_sum(s) / static_cast<float>(a.width);
    for (int64_t j = lane; j < D; j += 32) {
      const float xhat = to_f<T>(x[j]) * rstd;
      dy[j] = from_f<T>(j < a.width ? rstd * (to_f<T>(dy[j]) * to_f<T>(g[j]) - xhat * c) : 0.0f);
    }
  }
  __syncthreads();
  for (int64_t j = threadIdx.x; j < np; j += kThreads) {
    float sum = 0.0f;
    for (int w = 0; w < kWarps; ++w) sum += partials[w * np + j];
    a.scratch[blockIdx.x * np + j] = sum;
  }
}

int head_norm_blocks(const Launch& l, int64_t rows, int64_t normed) {
  const int64_t blocks = ceil_div(rows * normed, kWarps);
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(blocks, kBlocksPerSm * l.sms)));
}

}  // namespace

void head_norm_forward(const Launch& l, const HeadNormArgs& a) {
  if (a.rows == 0) return;
  HWT_DISPATCH_FLOAT(a.dt, T,
                     (head_norm_fwd_kernel<T>
                      <<<head_norm_blocks(l, a.rows, a.normed), kThreads, 0, l.stream>>>(a)));
}

size_t head_norm_backward_scratch_bytes(const Launch& l, int64_t rows, int64_t normed,
                                        int64_t head_dim) {
  return static_cast<size_t>(head_norm_blocks(l, rows, normed)) * 2 *
         static_cast<size_t>(head_dim) * sizeof(float);
}

void head_norm_backward(const Launch& l, const HeadNormArgs& a) {
  if (a.rows == 0) return;
  const int blocks = head_norm_blocks(l, a.rows, a.normed);
  const size_t smem =
      static_cast<size_t>(kWarps) * 2 * static_cast<size_t>(a.head_dim) * sizeof(float);
  HWT_DISPATCH_FLOAT(a.dt, T, (head_norm_bwd_kernel<T><<<blocks, kThreads, smem, l.stream>>>(a)));
  add_column_sums(l, a.scratch, blocks, 2 * a.head_dim, a.head_dim, a.d_q_gamma, a.d_k_gamma);
}

}  // namespace hwt::cuda
