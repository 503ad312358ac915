// The gated MLP activation (SwiGLU, GeGLU) and rotary position embeddings: element-wise passes
// with 16-byte accesses where the rows allow, math in fp32.
#include "backend/cuda/cuda_common.cuh"
#include "backend/cuda/cuda_kernels.h"
#include "core/activation_math.h"
#include "core/integer_math.h"

namespace hwt::cuda {
namespace {

// Thread t takes elements [t V, t V + V) of y (forward) or of both halves of d_pre (backward):
// with n % V == 0 a chunk never straddles a row.
template <class T, int V, bool kBackward>
__global__ void glu_kernel(const T* pre, const T* dy, T* out, int64_t rows, int64_t n,
                           Activation kind) {
  const int64_t total = rows * n;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x * V;
  for (int64_t i = (blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x) * V; i < total;
       i += stride) {
    const int64_t r = i / n, c = i % n;
    const T* gate_p = pre + r * 2 * n + c;
    float gate[V], up[V];
    load_floats<T, V>(gate_p, gate);
    load_floats<T, V>(gate_p + n, up);
    if constexpr (kBackward) {
      float g[V], d_gate[V], d_up[V];
      load_floats<T, V>(dy + i, g);
#pragma unroll
      for (int k = 0; k < V; ++k) {
        const GatedGrad d = gated_grad(kind, gate[k], up[k], g[k]);
        d_gate[k] = d.d_gate;
        d_up[k] = d.d_up;
      }
      T* d = out + r * 2 * n + c;
      store_floats<T, V>(d, d_gate);
      store_floats<T, V>(d + n, d_up);
    } else {
      float y[V];
#pragma unroll
      for (int k = 0; k < V; ++k) y[k] = gated(kind, gate[k], up[k]);
      store_floats<T, V>(out + i, y);
    }
  }
}

template <class T, bool kBackward>
void glu_typed(const Launch& l, const void* pre, const void* dy, void* out, int64_t rows, int64_t n,
               Activation kind) {
  constexpr int V = kVec16<T>;
  const T* p = static_cast<const T*>(pre);
  const T* g = static_cast<const T*>(dy);
  T* o = static_cast<T*>(out);
  if (n % V == 0 && aligned16(pre) && aligned16(out) && (!dy || aligned16(dy)))
    glu_kernel<T, V, kBackward>
        <<<grid_for(l, rows * n / V), kBlockThreads, 0, l.stream>>>(p, g, o, rows, n, kind);
  else
    glu_kernel<T, 1, kBackward>
        <<<grid_for(l, rows * n), kBlockThreads, 0, l.stream>>>(p, g, o, rows, n, kind);
}

// Thread t takes V consecutive pairs (i, i + half) of one rotated head (q heads, then k heads)
// of one row; half % V == 0, so the pairs stay inside the head's rotated part.
template <class T, int V>
__global__ void rope_kernel(RopeArgs a) {
  const int64_t half = a.rotary_dim / 2, chunks = half / V, rotated = a.heads + a.kv_heads;
  const int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (t >= a.rows * rotated * chunks) return;
  const int64_t i = (t % chunks) * V, hr = t / chunks, h = hr % rotated, r = hr / rotated;
  T* x = static_cast<T*>(a.qkv) + r * (a.heads + 2 * a.kv_heads) * a.head_dim + h * a.head_dim + i;
  const int64_t at = (a.positions ? a.positions[r] : r % a.seq) * half + i;
  const float sign = a.inverse ? -1.0f : 1.0f;
  float x1[V], x2[V];
  load_floats<T, V>(x, x1);
  load_floats<T, V>(x + half, x2);
#pragma unroll
  for (int k = 0; k < V; ++k) {
    const float c = __ldg(a.cos + at + k), s = sign * __ldg(a.sin + at + k);
    const float lo = x1[k] * c - x2[k] * s, hi = x2[k] * c + x1[k] * s;
    x1[k] = lo;
    x2[k] = hi;
  }
  store_floats<T, V>(x, x1);
  store_floats<T, V>(x + half, x2);
}

template <class T>
void rope_typed(const Launch& l, const RopeArgs& a) {
  constexpr int V = kVec16<T>;
  const int64_t half = a.rotary_dim / 2;
  // Every chunk is 16-byte aligned when the row width, the head size and the half are whole
  // chunks.
  const bool vec = half % V == 0 && a.head_dim % V == 0 && aligned16(a.qkv);
  const int64_t n = a.rows * (a.heads + a.kv_heads) * (vec ? half / V : half);
  const unsigned blocks = static_cast<unsigned>(ceil_div(n, kBlockThreads));
  if (vec)
    rope_kernel<T, V><<<blocks, kBlockThreads, 0, l.stream>>>(a);
  else
    rope_kernel<T, 1><<<blocks, kBlockThreads, 0, l.stream>>>(a);
}

}  // namespace

void glu_forward(const Launch& l, DType dt, const void* pre, void* y, int64_t rows, int64_t n,
                 Activation kind) {
  if (rows * n == 0) return;
  HWT_DISPATCH_FLOAT(dt, T, glu_typed<T, false>(l, pre, nullptr, y, rows, n, kind));
}

void glu_backward(const Launch& l, DType dt, const void* pre, const void* dy, void* d_pre,
                  int64_t rows, int64_t n, Activation kind) {
  if (rows * n == 0) return;
  HWT_DISPATCH_FLOAT(dt, T, glu_typed<T, true>(l, pre, dy, d_pre, rows, n, kind));
}

void rope(const Launch& l, const RopeArgs& a) {
  if (a.rows == 0 || a.rotary_dim == 0) return;
  HWT_DISPATCH_FLOAT(a.dt, T, rope_typed<T>(l, a));
}

}  // namespace hwt::cuda
