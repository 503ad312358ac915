// Elementwise work around the cuBLASLt GEMMs of a linear layer: bias and activation when no
// epilogue applies, and the fused activation backward + bias-gradient column reduction
// (deterministic: fixed row chunks, partials added in a fixed order by add_column_sums).
#include "backend/cuda/cuda_common.cuh"
#include "backend/cuda/cuda_kernels.h"
#include "core/activation_math.h"
#include "core/integer_math.h"

namespace hwt::cuda {
namespace {

constexpr int kWarps = kBlockThreads / 32;
constexpr int kChunkRows = 64;  // rows per block of the bias-gradient reduction

template <class T, int V>
__global__ void bias_act_kernel(T* z, const T* bias, T* y, int64_t rows, int64_t cols,
                                Activation act) {
  const int64_t n = rows * cols;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x * V;
  for (int64_t i = (blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x) * V; i < n;
       i += stride) {
    const int64_t c = i % cols;
    float v[V];
    load_floats<T, V>(z + i, v);
    if (bias) {
      float b[V];
      load_floats<T, V>(bias + c, b);
#pragma unroll
      for (int k = 0; k < V; ++k) v[k] = round_to<T>(v[k] + b[k]);
      if (act == Activation::None || y != z) store_floats<T, V>(z + i, v);
    }
    if (act != Activation::None) {
#pragma unroll
      for (int k = 0; k < V; ++k) v[k] = activate(act, v[k]);
      store_floats<T, V>(y + i, v);
    }
  }
}

template <class T, int V>
__global__ void act_bias_grad_kernel(T* dy, const T* pre, Activation act, int64_t rows,
                                     int64_t cols, float* partials) {
  __shared__ float shared[kWarps][32 * V];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int64_t c = (blockIdx.x * 32 + lane) * static_cast<int64_t>(V);
  const int64_t r0 = static_cast<int64_t>(blockIdx.y) * kChunkRows;
  float acc[V] = {};
  if (c < cols) {
    for (int64_t r = r0 + warp; r < r0 + kChunkRows && r < rows; r += kWarps) {
      float g[V];
      load_floats<T, V>(dy + r * cols + c, g);
      if (act != Activation::None) {
        float z[V];
        load_floats<T, V>(pre + r * cols + c, z);
#pragma unroll
        for (int k = 0; k < V; ++k) g[k] = round_to<T>(g[k] * activate_grad(act, z[k]));
        store_floats<T, V>(dy + r * cols + c, g);
      }
#pragma unroll
      for (int k = 0; k < V; ++k) acc[k] += g[k];
    }
  }
  if (!partials) return;
#pragma unroll
  for (int k = 0; k < V; ++k) shared[warp][lane * V + k] = acc[k];
  __syncthreads();
  for (int j = threadIdx.x; j < 32 * V; j += blockDim.x) {
    const int64_t col = blockIdx.x * 32LL * V + j;
    if (col >= cols) continue;
    float s = 0.0f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) s += shared[w][j];
    partials[blockIdx.y * cols + col] = s;
  }
}

template <class T>
void bias_act_typed(const Launch& l, void* z, const void* bias, void* y, int64_t rows, int64_t cols,
                    Activation act) {
  constexpr int V = kVec16<T>;
  T *tz = static_cast<T*>(z), *ty = static_cast<T*>(y);
  const T* tb = static_cast<const T*>(bias);
  if (cols % V == 0 && aligned16(z) && aligned16(y) && (!bias || aligned16(bias)))
    bias_act_kernel<T, V>
        <<<grid_for(l, rows * cols / V), kBlockThreads, 0, l.stream>>>(tz, tb, ty, rows, cols, act);
  else
    bias_act_kernel<T, 1>
        <<<grid_for(l, rows * cols), kBlockThreads, 0, l.stream>>>(tz, tb, ty, rows, cols, act);
}

template <class T, int V>
void act_bias_grad_launch(const Launch& l, void* dy, const void* pre, Activation act, float* db,
                          int64_t rows, int64_t cols, float* scratch) {
  const int chunks = static_cast<int>(ceil_div(rows, kChunkRows));
  const dim3 grid(static_cast<unsigned>(ceil_div(cols, 32 * V)), static_cast<unsigned>(chunks));
  act_bias_grad_kernel<T, V><<<grid, kBlockThreads, 0, l.stream>>>(
      static_cast<T*>(dy), static_cast<const T*>(pre), act, rows, cols, db ? scratch : nullptr);
  if (db) add_column_sums(l, scratch, chunks, cols, cols, db, nullptr);
}

template <class T>
void act_bias_grad_typed(const Launch& l, void* dy, const void* pre, Activation act, float* db,
                         int64_t rows, int64_t cols, float* scratch) {
  constexpr int V = kVec16<T>;
  if (cols % V == 0 && aligned16(dy) && (act == Activation::None || aligned16(pre)))
    act_bias_grad_launch<T, V>(l, dy, pre, act, db, rows, cols, scratch);
  else
    act_bias_grad_launch<T, 1>(l, dy, pre, act, db, rows, cols, scratch);
}

}  // namespace

void bias_act(const Launch& l, DType dt, void* z, const void* bias, void* y, int64_t rows,
              int64_t cols, Activation act) {
  if (rows * cols == 0 || (!bias && act == Activation::None)) return;
  HWT_DISPATCH_FLOAT(dt, T, bias_act_typed<T>(l, z, bias, y, rows, cols, act));
}

size_t bias_grad_scratch_bytes(int64_t rows, int64_t cols) {
  return static_cast<size_t>(ceil_div(rows, kChunkRows) * cols) * sizeof(float);
}

void act_backward_bias_grad(const Launch& l, DType dt, void* dy, const void* pre, Activation act,
                            float* db, int64_t rows, int64_t cols, float* scratch) {
  if (rows * cols == 0 || (!db && act == Activation::None)) return;
  HWT_DISPATCH_FLOAT(dt, T, act_bias_grad_typed<T>(l, dy, pre, act, db, rows, cols, scratch));
}

}  // namespace hwt::cuda
