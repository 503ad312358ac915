// Tensor-train-matrix token tables (model.tt.embedding). Forward: one thread per output element
// multiplies its chain of core slices (vectors of at most kTtmMaxRank). Backward: one thread per
// (row, core slice element) sums that element's gradient over the row's columns, then one thread
// per slice element adds the rows in order into the core gradient, so the result is
// deterministic. Simple rather than fast: the tables are small.
#include <algorithm>

#include "backend/cuda/cuda_common.cuh"
#include "backend/cuda/cuda_kernels.h"

namespace hwt::cuda {
namespace {

constexpr int kThreads = 256;

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

// The core whose slice holds element e of a row's slices side by side; e becomes its index there.
__device__ int slice_core(const TtmArgs& t, int64_t& e) {
  int k = 0;
  while (e >= slice_size(t, k)) e -= slice_size(t, k++);
  return k;
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
// left_k(c)[x] · d_out[r, c] · right_k(c)[b].
template <class T>
__global__ void ttm_slice_grad_kernel(TtmArgs t, const int* ids, const T* dout, float* slices,
                                      int64_t rows, int64_t per_row) {
  const int64_t n = rows * per_row;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = i / per_row;
    int64_t e = i % per_row;
    const int k = slice_core(t, e);
    const int64_t rn = t.ranks[k + 1], hk = t.hidden[k];
    const int64_t x = e / (hk * rn), y = (e / rn) % hk, b = e % rn;
    const int id = ids[r];
    float sum = 0.0f;
    if (id >= 0 && id < t.rows) {
      int64_t after = 1;
      for (int j = k + 1; j < t.cores; ++j) after *= t.hidden[j];
      const int64_t before = t.cols / (after * hk);
      for (int64_t p = 0; p < before; ++p)
        for (int64_t q = 0; q < after; ++q) {
          const int64_t c = (p * hk + y) * after + q;
          int64_t v[kTtmMaxCores], h[kTtmMaxCores];
          digits(t, id, c, v, h);
          float left[kTtmMaxRank], right[kTtmMaxRank];
          left_chain<T>(t, k, v, h, left);
          right_chain<T>(t, k, v, h, right);
          sum += left[x] * to_f<T>(dout[r * t.cols + c]) * right[b];
        }
    }
    slices[i] = sum;
  }
}

__global__ void ttm_core_grad_kernel(TtmArgs t, const int* ids, const float* slices, int64_t rows,
                                     int64_t per_row) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= per_row) return;
  int64_t e = i;
  const int k = slice_core(t, e);
  const int64_t rn = t.ranks[k + 1], hk = t.hidden[k];
  const int64_t x = e / (hk * rn), y = (e / rn) % hk, b = e % rn;
  int64_t after = 1;
  for (int j = k + 1; j < t.cores; ++j) after *= t.vocab[j];
  for (int64_t r = 0; r < rows; ++r) {
    const int id = ids[r];
    if (id < 0 || id >= t.rows) continue;
    const int64_t v = (id / after) % t.vocab[k];
    t.grad[k][((x * t.vocab[k] + v) * hk + y) * rn + b] += slices[r * per_row + i];
  }
}

int64_t slices_per_row(const TtmArgs& t) {
  int64_t n = 0;
  for (int k = 0; k < t.cores; ++k) n += slice_size(t, k);
  return n;
}

unsigned blocks_for(int64_t n, const Launch& l) {
  return static_cast<unsigned>(std::min<int64_t>(16LL * l.sms, (n + kThreads - 1) / kThreads));
}

}  // namespace

void tt_embedding_forward(const Launch& l, DType dt, const TtmArgs& t, const int* ids,
                          const void* pos, void* out, int64_t rows, int64_t seq) {
  if (rows == 0) return;
  HWT_DISPATCH_FLOAT(
      dt, T,
      ttm_fwd_kernel<T><<<blocks_for(rows * t.cols, l), kThreads, 0, l.stream>>>(
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
  HWT_DISPATCH_FLOAT(dt, T,
                     ttm_slice_grad_kernel<T>
                     <<<blocks_for(rows * per_row, l), kThreads, 0, l.stream>>>(
                         t, ids, static_cast<const T*>(d_out), slices, rows, per_row));
  ttm_core_grad_kernel<<<static_cast<unsigned>((per_row + kThreads - 1) / kThreads), kThreads, 0,
                         l.stream>>>(t, ids, slices, rows, per_row);
}

}  // namespace hwt::cuda
