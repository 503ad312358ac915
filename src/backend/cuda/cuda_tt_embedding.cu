// Tensor-train-matrix token tables (model.tt.embedding). Forward: one thread per output element
// multiplies its chain of core slices (vectors of at most kTtmMaxRank). Backward: one block per
// row; for each core, the left and right chains of a chunk of columns go to shared memory once,
// and each thread sums its slice elements over them (a thread per element that recomputed the
// chains for every column spent 9 ms of an 11 ms ATIS step on the H200); then one thread per
// core gradient entry adds its rows' slices in row order, so the result is deterministic.
#include <algorithm>

#include "backend/cuda/cuda_common.cuh"
#include "backend/cuda/cuda_kernels.h"
#include "core/integer_math.h"

namespace hwt::cuda {
namespace {

template <class T>
__device__ float core_at(const TtmArgs& t, int k, int64_t a, int64_t v, int64_t h, int64_t b) {
  const T* g = static_cast<const T*>(t.core[k]);
  return to_f<T>(g[((a * t.vocab[k] + v) * t.hidden[k] + h) * t.ranks[k + 1] + b]);
}

// The row-major digits of an id over the vocabulary factors and of a column over the hidden ones.
__device__ void digits(const TtmArgs& t, int64_t id, int64_t col, int64_t* v, int64_t* h) {
  for (int k = t.cores - 1; k >= 0; --k) {
    v[k] = id % t.vocab[k];
    id /= t.vocab[k];
    h[k] = col % t.hidden[k];
    col /= t.hidden[k];
  }
}

// left = slice 0 ··· slice k-1 at the digits (a row of r_k); left = [1] for k = 0.
template <class T>
__device__ void left_chain(const TtmArgs& t, int k, const int64_t* v, const int64_t* h,
                           float* left) {
  float next[kTtmMaxRank];
  left[0] = 1.0f;
  for (int j = 0; j < k; ++j) {
    for (int64_t b = 0; b < t.ranks[j + 1]; ++b) {
      float s = 0.0f;
      for (int64_t a = 0; a < t.ranks[j]; ++a) s += left[a] * core_at<T>(t, j, a, v[j], h[j], b);
      next[b] = s;
    }
    for (int64_t b = 0; b < t.ranks[j + 1]; ++b) left[b] = next[b];
  }
}

// right = slice k+1 ··· slice d-1 at the digits (a column of r_{k+1}); [1] for the last core.
template <class T>
__device__ void right_chain(const TtmArgs& t, int k, const int64_t* v, const int64_t* h,
                            float* right) {
  float next[kTtmMaxRank];
  right[0] = 1.0f;
  for (int j = t.cores - 1; j > k; --j) {
    for (int64_t a = 0; a < t.ranks[j]; ++a) {
      float s = 0.0f;
      for (int64_t b = 0; b < t.ranks[j + 1]; ++b)
        s += core_at<T>(t, j, a, v[j], h[j], b) * right[b];
      next[a] = s;
    }
    for (int64_t a = 0; a < t.ranks[j]; ++a) right[a] = next[a];
  }
}

__host__ __device__ int64_t slice_size(const TtmArgs& t, int k) {
  return t.ranks[k] * t.hidden[k] * t.ranks[k + 1];
}

template <class T>
__global__ void ttm_fwd_kernel(TtmArgs t, const int* ids, const T* pos, T* out, int64_t rows,
                               int64_t seq, int* errors) {
  const int64_t n = rows * t.cols;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = i / t.cols, c = i % t.cols;
    const int id = ids[r];
    if (id < 0 || id >= t.rows) {
      if (c == 0) atomicOr(errors, kErrTokenId);
      out[i] = from_f<T>(0.0f);
      continue;
    }
    int64_t v[kTtmMaxCores], h[kTtmMaxCores];
    digits(t, id, c, v, h);
    float chain[kTtmMaxRank];
    left_chain<T>(t, t.cores, v, h, chain);
    out[i] = from_f<T>(chain[0] + (pos ? to_f<T>(pos[(r % seq) * t.cols + c]) : 0.0f));
  }
}

// slices[r, offset_k + (x, y, b)] = Σ over the columns c with hidden digit k = y of
// left_k(c)[x] · d_out[r, c] · right_k(c)[b]. Block r; shared memory: the chains of `chunk`
// columns, `stride` floats each, then the chunk's d_out values and hidden digits k.
template <class T>
__global__ void ttm_slice_grad_kernel(TtmArgs t, const int* ids, const T* dout, float* slices,
                                      int64_t per_row, int chunk, int stride) {
  extern __shared__ float chains[];
  float* left = chains;
  float* right = left + chunk * stride;
  float* d = right + chunk * stride;
  int* digit = reinterpret_cast<int*>(d + chunk);
  const int64_t r = blockIdx.x;
  float* out = slices + r * per_row;
  for (int64_t e = threadIdx.x; e < per_row; e += blockDim.x) out[e] = 0.0f;
  const int id = ids[r];
  if (id < 0 || id >= t.rows) return;  // the whole block: the forward reported the id
  int64_t offset = 0;
  for (int k = 0; k < t.cores; ++k) {
    const int64_t rn = t.ranks[k + 1], hk = t.hidden[k], size = t.ranks[k] * hk * rn;
    for (int64_t c0 = 0; c0 < t.cols; c0 += chunk) {
      const int n = static_cast<int>(min(static_cast<int64_t>(chunk), t.cols - c0));
      __syncthreads();  // the previous chunk's chains are read
      for (int j = threadIdx.x; j < n; j += blockDim.x) {
        int64_t v[kTtmMaxCores], h[kTtmMaxCores];
        digits(t, id, c0 + j, v, h);
        left_chain<T>(t, k, v, h, left + j * stride);
        right_chain<T>(t, k, v, h, right + j * stride);
        d[j] = to_f<T>(dout[r * t.cols + c0 + j]);
        digit[j] = static_cast<int>(h[k]);
      }
      __syncthreads();
      for (int64_t e = threadIdx.x; e < size; e += blockDim.x) {
        const int64_t x = e / (hk * rn), y = (e / rn) % hk, b = e % rn;
        float sum = 0.0f;
        for (int j = 0; j < n; ++j)
          if (digit[j] == y) sum += left[j * stride + x] * d[j] * right[j * stride + b];
        out[offset + e] += sum;
      }
    }
    offset += size;
  }
}

// grad[k][x, v, y, b] += Σ over the rows r whose id has vocabulary digit k = v, in row order,
// of slices[r, offset_k + (x, y, b)]: one thread per core gradient entry, summed in a register.
__global__ void ttm_core_grad_kernel(TtmArgs t, const int* ids, const float* slices, int64_t rows,
                                     int64_t per_row, int64_t entries) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= entries) return;
  int64_t e = i, offset = 0;
  int k = 0;
  while (e >= slice_size(t, k) * t.vocab[k]) {
    e -= slice_size(t, k) * t.vocab[k];
    offset += slice_size(t, k++);
  }
  const int64_t rn = t.ranks[k + 1], hk = t.hidden[k], vk = t.vocab[k];
  const int64_t x = e / (vk * hk * rn), v = e / (hk * rn) % vk, y = e / rn % hk, b = e % rn;
  const float* slice = slices + offset + (x * hk + y) * rn + b;
  int64_t after = 1;
  for (int j = k + 1; j < t.cores; ++j) after *= t.vocab[j];
  float sum = 0.0f;
  for (int64_t r = 0; r < rows; ++r) {
    const int id = ids[r];
    if (id >= 0 && id < t.rows && id / after % vk == v) sum += slice[r * per_row];
  }
  t.grad[k][e] += sum;
}

int64_t slices_per_row(const TtmArgs& t) {
  int64_t n = 0;
  for (int k = 0; k < t.cores; ++k) n += slice_size(t, k);
  return n;
}

unsigned blocks_for(int64_t n, const Launch& l) {
  return static_cast<unsigned>(std::min<int64_t>(16LL * l.sms, ceil_div(n, kBlockThreads)));
}

}  // namespace

void tt_embedding_forward(const Launch& l, DType dt, const TtmArgs& t, const int* ids,
                          const void* pos, void* out, int64_t rows, int64_t seq) {
  if (rows == 0) return;
  HWT_DISPATCH_FLOAT(
      dt, T,
      ttm_fwd_kernel<T><<<blocks_for(rows * t.cols, l), kBlockThreads, 0, l.stream>>>(
          t, ids, static_cast<const T*>(pos), static_cast<T*>(out), rows, seq, l.errors));
}

size_t tt_embedding_backward_scratch_bytes(const TtmArgs& t, int64_t rows) {
  return static_cast<size_t>(rows * slices_per_row(t)) * sizeof(float);
}

void tt_embedding_backward(const Launch& l, DType dt, const TtmArgs& t, const int* ids,
                           const void* d_out, int64_t rows, void* scratch) {
  if (rows == 0) return;
  const int64_t per_row = slices_per_row(t);
  float* slices = static_cast<float*>(scratch);
  // Chunks of columns whose chains fit the default 48 KB of shared memory.
  const int stride = static_cast<int>(*std::max_element(t.ranks, t.ranks + t.cores + 1));
  const size_t per_col = (2 * stride + 2) * sizeof(float);  // chains, d_out, digit
  const int chunk = static_cast<int>(std::min<int64_t>(t.cols, (48 << 10) / per_col / 32 * 32));
  const size_t smem = static_cast<size_t>(chunk) * per_col;
  HWT_DISPATCH_FLOAT(dt, T,
                     ttm_slice_grad_kernel<T>
                     <<<static_cast<unsigned>(rows), kBlockThreads, smem, l.stream>>>(
                         t, ids, static_cast<const T*>(d_out), slices, per_row, chunk, stride));
  int64_t entries = 0;
  for (int k = 0; k < t.cores; ++k) entries += slice_size(t, k) * t.vocab[k];
  ttm_core_grad_kernel<<<static_cast<unsigned>(ceil_div(entries, kBlockThreads)), kBlockThreads, 0,
                         l.stream>>>(t, ids, slices, rows, per_row, entries);
}

}  // namespace hwt::cuda
