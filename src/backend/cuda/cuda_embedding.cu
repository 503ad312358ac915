// Token + position embeddings and sequence pooling. The token-table gradient is deterministic:
// a stable radix sort groups the rows of each token id, then one warp per (id, 64-column chunk)
// adds that id's rows in their original order.
#include <algorithm>
#include <cub/device/device_radix_sort.cuh>

#include "backend/cuda/cuda_common.cuh"
#include "backend/cuda/cuda_kernels.h"
#include "core/integer_math.h"

namespace hwt::cuda {
namespace {

template <class T, int V>
__global__ void embedding_fwd_kernel(const int* ids, const T* table, const T* pos,
                                     const int* positions, T* out, int64_t rows, int64_t cols,
                                     int64_t vocab, int64_t seq, int* errors) {
  const int64_t n = rows * cols;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x * V;
  for (int64_t i = (blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x) * V; i < n;
       i += stride) {
    const int64_t r = i / cols, c = i % cols;
    const int id = ids[r];
    float v[V];
    if (id < 0 || id >= vocab) {
      if (c == 0) atomicOr(errors, kErrTokenId);
#pragma unroll
      for (int k = 0; k < V; ++k) v[k] = 0.0f;
    } else {
      load_floats<T, V>(table + id * cols + c, v);
      if (pos) {
        float p[V];
        load_floats<T, V>(pos + (positions ? positions[r] : r % seq) * cols + c, p);
#pragma unroll
        for (int k = 0; k < V; ++k) v[k] += p[k];
      }
    }
    store_floats<T, V>(out + i, v);
  }
}

__global__ void sort_prep_kernel(const int* ids, unsigned* keys, int* rows_idx, int64_t rows,
                                 int64_t vocab) {
  const int64_t r = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (r >= rows) return;
  const int id = ids[r];
  keys[r] = static_cast<unsigned>(id >= 0 && id < vocab ? id : vocab);  // vocab: skipped
  rows_idx[r] = static_cast<int>(r);
}

// One warp per (sorted position k, column chunk); only the first position of each run of equal
// ids does work: it adds the whole run, in row order, into the table gradient.
template <class T>
__global__ void segment_sum_kernel(const unsigned* keys, const int* rows_idx, const T* dout,
                                   float* dtable, int64_t rows, int64_t cols, unsigned skip) {
  const int lane = threadIdx.x & 31;
  const int64_t chunks = ceil_div(cols, 64);
  const int64_t tasks = rows * chunks;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / 32);
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x / 32) + (threadIdx.x >> 5);
       t < tasks; t += warps) {
    const int64_t k = t / chunks, c0 = (t % chunks) * 64 + lane, c1 = c0 + 32;
    const unsigned key = keys[k];
    if (key == skip || (k > 0 && keys[k - 1] == key)) continue;
    float a0 = 0.0f, a1 = 0.0f;
    for (int64_t j = k; j < rows && keys[j] == key; ++j) {
      const T* g = dout + static_cast<int64_t>(rows_idx[j]) * cols;
      if (c0 < cols) a0 += to_f<T>(g[c0]);
      if (c1 < cols) a1 += to_f<T>(g[c1]);
    }
    float* dst = dtable + static_cast<int64_t>(key) * cols;
    if (c0 < cols) dst[c0] += a0;
    if (c1 < cols) dst[c1] += a1;
  }
}

template <class T>
__global__ void pos_grad_kernel(const T* dout, float* dpos, int64_t batch, int64_t seq,
                                int64_t cols) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= seq * cols) return;
  float acc = 0.0f;
  for (int64_t b = 0; b < batch; ++b) acc += to_f<T>(dout[b * seq * cols + i]);
  dpos[i] += acc;
}

template <class T>
__global__ void pool_fwd_kernel(const T* x, T* out, const int* lengths, int64_t batch, int64_t seq,
                                int64_t cols, bool mean) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= batch * cols) return;
  const int64_t b = i / cols, c = i % cols;
  const T* rows = x + b * seq * cols + c;
  if (!mean) {
    out[i] = rows[0];
    return;
  }
  int64_t len = lengths[b];
  len = len < 1 ? 1 : (len > seq ? seq : len);
  float s = 0.0f;
  for (int64_t t = 0; t < len; ++t) s += to_f<T>(rows[t * cols]);
  out[i] = from_f<T>(s / static_cast<float>(len));
}

template <class T>
__global__ void pool_bwd_kernel(const T* dout, T* dx, const int* lengths, int64_t batch,
                                int64_t seq, int64_t cols, bool mean) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= batch * seq * cols) return;
  const int64_t b = i / (seq * cols), t = (i / cols) % seq, c = i % cols;
  int64_t len = 1;
  if (mean) {
    len = lengths[b];
    len = len < 1 ? 1 : (len > seq ? seq : len);
  }
  if (t >= len) return;
  const float w = 1.0f / static_cast<float>(len);
  dx[i] = from_f<T>(to_f<T>(dx[i]) + to_f<T>(dout[b * cols + c]) * w);
}

unsigned blocks_for(int64_t n) {
  return static_cast<unsigned>(ceil_div(n, kBlockThreads));
}

int end_bit_for(int64_t vocab) {
  int bits = 1;
  while ((int64_t{1} << bits) <= vocab) ++bits;
  return bits;
}

size_t align256(size_t b) {
  return round_up(b, 256);
}

size_t sort_temp_bytes(int64_t rows, int64_t vocab) {
  size_t bytes = 0;
  cub::DeviceRadixSort::SortPairs(nullptr, bytes, static_cast<const unsigned*>(nullptr),
                                  static_cast<unsigned*>(nullptr), static_cast<const int*>(nullptr),
                                  static_cast<int*>(nullptr), static_cast<int>(rows), 0,
                                  end_bit_for(vocab));
  return bytes;
}

template <class T>
void embedding_fwd_typed(const Launch& l, const int* ids, const void* table, const void* pos,
                         const int* positions, void* out, int64_t rows, int64_t cols, int64_t vocab,
                         int64_t seq) {
  constexpr int V = kVec16<T>;
  const T *tt = static_cast<const T*>(table), *tp = static_cast<const T*>(pos);
  T* to = static_cast<T*>(out);
  const int64_t cap = 8LL * l.sms;
  if (cols % V == 0 && aligned16(table) && aligned16(out) && (!pos || aligned16(pos))) {
    const int64_t blocks = std::min<int64_t>(cap, ceil_div(rows * cols / V, kBlockThreads));
    embedding_fwd_kernel<T, V><<<static_cast<unsigned>(blocks), kBlockThreads, 0, l.stream>>>(
        ids, tt, tp, positions, to, rows, cols, vocab, seq, l.errors);
  } else {
    const int64_t blocks = std::min<int64_t>(cap, ceil_div(rows * cols, kBlockThreads));
    embedding_fwd_kernel<T, 1><<<static_cast<unsigned>(blocks), kBlockThreads, 0, l.stream>>>(
        ids, tt, tp, positions, to, rows, cols, vocab, seq, l.errors);
  }
}

template <class T>
void embedding_bwd_typed(const Launch& l, const int* ids, const void* d_out, float* d_table,
                         float* d_pos, int64_t rows, int64_t cols, int64_t vocab, int64_t seq,
                         void* scratch, size_t scratch_bytes) {
  const T* g = static_cast<const T*>(d_out);
  if (d_table) {
    char* s = static_cast<char*>(scratch);
    const size_t arr = align256(static_cast<size_t>(rows) * 4);
    unsigned* keys_in = reinterpret_cast<unsigned*>(s);
    unsigned* keys_out = reinterpret_cast<unsigned*>(s + arr);
    int* vals_in = reinterpret_cast<int*>(s + 2 * arr);
    int* vals_out = reinterpret_cast<int*>(s + 3 * arr);
    size_t temp_bytes = scratch_bytes - 4 * arr;
    sort_prep_kernel<<<blocks_for(rows), kBlockThreads, 0, l.stream>>>(ids, keys_in, vals_in, rows,
                                                                       vocab);
    cub::DeviceRadixSort::SortPairs(s + 4 * arr, temp_bytes, keys_in, keys_out, vals_in, vals_out,
                                    static_cast<int>(rows), 0, end_bit_for(vocab), l.stream);
    const int64_t tasks = rows * ceil_div(cols, 64);
    const int64_t blocks = std::min<int64_t>(16LL * l.sms, ceil_div(tasks, 8));
    segment_sum_kernel<T><<<static_cast<unsigned>(blocks), kBlockThreads, 0, l.stream>>>(
        keys_out, vals_out, g, d_table, rows, cols, static_cast<unsigned>(vocab));
  }
  if (d_pos)
    pos_grad_kernel<T>
        <<<blocks_for(seq * cols), kBlockThreads, 0, l.stream>>>(g, d_pos, rows / seq, seq, cols);
}

}  // namespace

void embedding_forward(const Launch& l, DType dt, const int* ids, const void* table,
                       const void* pos, const int* positions, void* out, int64_t rows, int64_t cols,
                       int64_t vocab, int64_t seq) {
  if (rows * cols == 0) return;
  HWT_DISPATCH_FLOAT(
      dt, T, embedding_fwd_typed<T>(l, ids, table, pos, positions, out, rows, cols, vocab, seq));
}

size_t embedding_backward_scratch_bytes(int64_t rows, int64_t vocab) {
  return 4 * align256(static_cast<size_t>(rows) * 4) + sort_temp_bytes(rows, vocab);
}

void embedding_backward(const Launch& l, DType dt, const int* ids, const void* d_out,
                        float* d_table, float* d_pos, int64_t rows, int64_t cols, int64_t vocab,
                        int64_t seq, void* scratch, size_t scratch_bytes) {
  if (rows * cols == 0) return;
  HWT_DISPATCH_FLOAT(dt, T,
                     embedding_bwd_typed<T>(l, ids, d_out, d_table, d_pos, rows, cols, vocab, seq,
                                            scratch, scratch_bytes));
}

void pool_forward(const Launch& l, DType dt, const void* x, void* out, const int* lengths,
                  int64_t batch, int64_t seq, int64_t cols, bool mean) {
  if (batch * cols == 0) return;
  HWT_DISPATCH_FLOAT(
      dt, T,
      pool_fwd_kernel<T><<<blocks_for(batch * cols), kBlockThreads, 0, l.stream>>>(
          static_cast<const T*>(x), static_cast<T*>(out), lengths, batch, seq, cols, mean));
}

void pool_backward(const Launch& l, DType dt, const void* d_out, void* d_x, const int* lengths,
                   int64_t batch, int64_t seq, int64_t cols, bool mean) {
  if (batch * seq * cols == 0) return;
  HWT_DISPATCH_FLOAT(
      dt, T,
      pool_bwd_kernel<T><<<blocks_for(batch * seq * cols), kBlockThreads, 0, l.stream>>>(
          static_cast<const T*>(d_out), static_cast<T*>(d_x), lengths, batch, seq, cols, mean));
}

}  // namespace hwt::cuda
