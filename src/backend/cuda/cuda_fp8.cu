// The fp8 cast (Fp8Cast in ops.h): out = fp8(x · scale), rounded to nearest even and saturating,
// as the operand copies of an fp8 GEMM, laid out as x and/or transposed (the K-major copy a
// backward GEMM reads) in one pass over x, with what the cast saw (amax, saturated, flushed to
// zero, not finite) reduced per block and added to the tensor's running figures with one atomic
// each. The conversion is the hardware's (cvt.rn.satfinite on sm_89 and later, cuda_fp8.h's
// emulation before); NaN stays NaN. The transposed cast's tile kernel also serves the gated units
// that write their output's fp8 copies themselves (GluFwd / GluBwd with Fp8Out), computing the
// values on the way. Also delayed scaling's end-of-step update of the scales (Fp8ScaleUpdate).
#include <cuda_fp8.h>

#include <algorithm>

#include "backend/cuda/cuda_common.cuh"
#include "backend/cuda/cuda_kernels.h"
#include "core/activation_math.h"
#include "core/integer_math.h"

namespace hwt::cuda {
namespace {

// Whether |v| (scaled, before rounding) rounds past the format's largest finite value: E4M3's
// largest, 448 = 1.75 · 2^8, has an even mantissa, so the tie at 464 rounds down to it; E5M2's,
// 57344 = 1.75 · 2^15, an odd one, so the tie at 61440 rounds up, past it.
template <__nv_fp8_interpretation_t F>
__device__ __forceinline__ bool rounds_past_largest(float v) {
  if constexpr (F == __NV_E4M3)
    return v > 464.0f;
  else
    return v >= 61440.0f;
}

// What a thread's casts saw.
struct Tally {
  float amax = 0.0f;
  int overflow = 0, underflow = 0, non_finite = 0;
};

template <__nv_fp8_interpretation_t F>
__device__ __forceinline__ uint8_t cast_one(float x, float scale, Tally& t) {
  const float v = x * scale;
  const auto code = static_cast<uint8_t>(__nv_cvt_float_to_fp8(v, __NV_SATFINITE, F));
  if (!isfinite(x)) {
    ++t.non_finite;
    return code;
  }
  t.amax = fmaxf(t.amax, fabsf(x));
  if (rounds_past_largest<F>(fabsf(v))) ++t.overflow;
  if (x != 0.0f && (code & 0x7fu) == 0) ++t.underflow;
  return code;
}

// The block's tally added to the tensor's figures: amax by an integer maximum (a non-negative
// float orders as its bits do), the counts by sums.
__device__ __forceinline__ void add_tally(Tally t, const Fp8CastArgs& a) {
  if (a.amax == nullptr) return;  // a cast that keeps no figures (the same for every thread)
  __shared__ int red[32];
  __shared__ float red_max[32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const float m = warp_max(t.amax);
  if (lane == 0) red_max[warp] = m;
  const int over = block_sum(t.overflow, red);
  const int under = block_sum(t.underflow, red);
  const int bad = block_sum(t.non_finite, red);  // block_sum's barriers order red_max too
  if (threadIdx.x != 0) return;
  float amax = 0.0f;
  for (int w = 0; w < static_cast<int>(blockDim.x >> 5); ++w) amax = fmaxf(amax, red_max[w]);
  if (amax > 0.0f) atomicMax(reinterpret_cast<int*>(a.amax), __float_as_int(amax));
  if (over) atomicAdd(a.counts, over);
  if (under) atomicAdd(a.counts + 1, under);
  if (bad) atomicAdd(a.counts + 2, bad);
}

// Laid out as x: V elements a step (16 bytes of x) where x allows, one at a time otherwise.
template <class T, __nv_fp8_interpretation_t F, int V>
__global__ void cast_kernel(Fp8CastArgs a) {
  const T* x = static_cast<const T*>(a.x);
  uint8_t* out = static_cast<uint8_t*>(a.out);
  const int64_t n = a.rows * a.cols;
  const float scale = *a.scale;
  Tally t;
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = (blockIdx.x * int64_t{blockDim.x} + threadIdx.x) * V; i < n; i += stride * V) {
    if (i + V <= n) {
      float xv[V];
      load_floats<T, V>(x + i, xv);
      Pack<uint8_t, V> codes;
#pragma unroll
      for (int e = 0; e < V; ++e) codes.v[e] = cast_one<F>(xv[e], scale, t);
      store_pack<uint8_t, V>(out + i, codes);
    } else {
      for (int64_t j = i; j < n; ++j) out[j] = cast_one<F>(to_f<T>(x[j]), scale, t);
    }
  }
  add_tally(t, a);
}

// Where a tile kernel's values come from: x itself (the transposed cast), or a gated unit's
// forward or backward, computed on the way (GluFwd / GluBwd writing fp8 copies). A source has
// kPlanes planes of `cols` columns: plane p's column c is the output's column p · cols + c (the
// backward's d_gate, then d_up). Whole tiles are read V columns at a time: fetch() loads the
// 16-byte pieces at row r, column c (only where vectors() holds) and values() computes from them
// (given c again); load1() gives one column of each plane.
template <class T>
struct CastSource {
  static constexpr int kPlanes = 1, V = kVec16<T>;
  struct Raw {
    Pack<T, V> x;
  };
  const T* x;
  int64_t cols;
  bool vectors() const { return cols % V == 0 && aligned16(x); }
  __device__ __forceinline__ void fetch(int64_t r, int64_t c, Raw& raw) const {
    raw.x = load_pack<T, V>(x + r * cols + c);
  }
  __device__ __forceinline__ void values(const Raw& raw, int64_t, float (&v)[1][V]) const {
#pragma unroll
    for (int k = 0; k < V; ++k) v[0][k] = to_f<T>(raw.x.v[k]);
  }
  __device__ __forceinline__ void load1(int64_t r, int64_t c, float (&v)[1]) const {
    v[0] = to_f<T>(x[r * cols + c]);
  }
};

template <class T, bool kBackward>
struct GluSource {
  static constexpr int kPlanes = kBackward ? 2 : 1, V = kVec16<T>;
  struct Raw {
    Pack<T, V> gate, up, dy;  // dy: the backward's
  };
  const T* pre;
  const T* dy;
  int64_t cols;  // n
  Activation kind;
  bool vectors() const { return cols % V == 0 && aligned16(pre) && (!kBackward || aligned16(dy)); }
  __device__ __forceinline__ void fetch(int64_t r, int64_t c, Raw& raw) const {
    raw.gate = load_pack<T, V>(pre + r * 2 * cols + c);
    raw.up = load_pack<T, V>(pre + r * 2 * cols + cols + c);
    if constexpr (kBackward) raw.dy = load_pack<T, V>(dy + r * cols + c);
  }
  __device__ __forceinline__ void values(const Raw& raw, int64_t, float (&v)[kPlanes][V]) const {
#pragma unroll
    for (int k = 0; k < V; ++k) {
      const float gate = to_f<T>(raw.gate.v[k]), up = to_f<T>(raw.up.v[k]);
      if constexpr (kBackward) {
        const GatedGrad d = gated_grad(kind, gate, up, to_f<T>(raw.dy.v[k]));
        v[0][k] = d.d_gate;
        v[1][k] = d.d_up;
      } else {
        v[0][k] = gated(kind, gate, up);
      }
    }
  }
  __device__ __forceinline__ void load1(int64_t r, int64_t c, float (&v)[kPlanes]) const {
    const float gate = to_f<T>(pre[r * 2 * cols + c]), up = to_f<T>(pre[r * 2 * cols + cols + c]);
    if constexpr (kBackward) {
      const GatedGrad d = gated_grad(kind, gate, up, to_f<T>(dy[r * cols + c]));
      v[0] = d.d_gate;
      v[1] = d.d_up;
    } else {
      v[0] = gated(kind, gate, up);
    }
  }
};

// The cross-entropy gradient of rows whose log-sum-exp cross_entropy wrote (CrossEntropy with
// Fp8Out), computed as that kernel computes it: rows ignored or with a target past the classes,
// and padding columns, give 0.
template <class T>
struct CrossEntropySource {
  static constexpr int kPlanes = 1, V = kVec16<T>;
  struct Raw {
    Pack<T, V> x;
    float lse;
    int target;
  };
  const T* logits;
  const int* targets;
  const float* lse;
  int64_t cols, classes;
  float grad_scale;
  const float* loss_scale;
  bool vectors() const { return cols % V == 0 && aligned16(logits); }
  __device__ __forceinline__ void fetch(int64_t r, int64_t c, Raw& raw) const {
    raw.x = load_pack<T, V>(logits + r * cols + c);
    raw.lse = lse[r];
    raw.target = targets[r];
  }
  template <int W>
  __device__ __forceinline__ void grad(float (&v)[W], int64_t c, float row_lse, int target) const {
    if (target < 0 || target >= classes) {
#pragma unroll
      for (int k = 0; k < W; ++k) v[k] = 0.0f;
      return;
    }
    ce_grad<W>(v, c, target, row_lse, grad_scale * (loss_scale ? *loss_scale : 1.0f));
#pragma unroll
    for (int k = 0; k < W; ++k)
      if (c + k >= classes) v[k] = 0.0f;
  }
  __device__ __forceinline__ void values(const Raw& raw, int64_t c, float (&v)[1][V]) const {
#pragma unroll
    for (int k = 0; k < V; ++k) v[0][k] = to_f<T>(raw.x.v[k]);
    grad<V>(v[0], c, raw.lse, raw.target);
  }
  __device__ __forceinline__ void load1(int64_t r, int64_t c, float (&v)[1]) const {
    float one[1] = {to_f<T>(logits[r * cols + c])};
    grad<1>(one, c, lse[r], targets[r]);
    v[0] = one[0];
  }
};

// What a tile kernel writes for a [rows, kPlanes · cols] output: its fp8 codes as it is (out)
// and transposed (out_t), and the values themselves in T (y); any may be null.
template <class T>
struct TileOut {
  uint8_t* out = nullptr;
  uint8_t* out_t = nullptr;
  T* y = nullptr;
  int64_t rows = 0;
  bool vectors = false;  // 16-byte reads of the source, V-element stores of out and y
};

// A block casts 64 x 64 tiles of each plane, reading rows: the codes go to out and the values to
// y straight from registers, and through shared memory to out_t as the tile's columns. A whole
// tile is read 16 bytes of x a thread and written 16 bytes of a column a thread where the
// layouts allow it; edge tiles go an element at a time. The tile's rows are 68 bytes apart: whole
// words for the codes' stores, and the four column pieces a warp reads (rows 16 apart) fall in
// two banks, not one.
constexpr int kTileT = 64;
constexpr int kTileThreads = 256;
constexpr int kTilePitch = kTileT + 4;

template <class T, __nv_fp8_interpretation_t F, class Src>
__global__ void __launch_bounds__(kTileThreads)
    tile_cast_kernel(Src src, TileOut<T> o, Fp8CastArgs a) {
  constexpr int V = Src::V, P = Src::kPlanes;
  __shared__ __align__(16) uint8_t tile[P][kTileT][kTilePitch];
  const float scale = *a.scale;
  const int64_t rows = o.rows, cols = src.cols, width = P * cols;
  const auto out_t_at = reinterpret_cast<uintptr_t>(o.out_t);
  const bool columns_in_vectors = rows % 16 == 0 && out_t_at % 16 == 0;
  const bool words = rows % 4 == 0 && out_t_at % 4 == 0;
  Tally t;
  // Row tiles on x (no practical limit), column tiles on y, looping past the grid's 65535.
  const int64_t r0 = int64_t{blockIdx.x} * kTileT;
  for (int64_t c0 = int64_t{blockIdx.y} * kTileT; c0 < cols; c0 += int64_t{gridDim.y} * kTileT) {
    const bool whole = r0 + kTileT <= rows && c0 + kTileT <= cols;
    if (whole && o.vectors) {
      constexpr int kChunks = kTileT / V;  // of a tile row
      for (int w = threadIdx.x; w < kTileT * kChunks; w += kTileThreads) {
        const int r = w / kChunks, cc = (w % kChunks) * V;
        typename Src::Raw raw;
        src.fetch(r0 + r, c0 + cc, raw);
        float v[P][V];
        src.values(raw, c0 + cc, v);
#pragma unroll
        for (int p = 0; p < P; ++p) {
          const int64_t at = (r0 + r) * width + p * cols + c0 + cc;
          Pack<uint8_t, V> codes;
#pragma unroll
          for (int e = 0; e < V; ++e) codes.v[e] = cast_one<F>(v[p][e], scale, t);
          if (o.out) store_pack<uint8_t, V>(o.out + at, codes);
          if (o.y) store_floats<T, V>(o.y + at, v[p]);
          if (o.out_t) {
#pragma unroll
            for (int q = 0; q < V; q += 4)
              *reinterpret_cast<uint32_t*>(&tile[p][r][cc + q]) =
                  uint32_t{codes.v[q]} | uint32_t{codes.v[q + 1]} << 8 |
                  uint32_t{codes.v[q + 2]} << 16 | uint32_t{codes.v[q + 3]} << 24;
          }
        }
      }
    } else {
      const int c = threadIdx.x % kTileT;
      for (int r = threadIdx.x / kTileT; r < kTileT; r += kTileThreads / kTileT) {
        const int64_t gr = r0 + r, gc = c0 + c;
        const bool inside = gr < rows && gc < cols;
        float v[P] = {};
        if (inside) src.load1(gr, gc, v);
#pragma unroll
        for (int p = 0; p < P; ++p) {
          const uint8_t code = inside ? cast_one<F>(v[p], scale, t) : uint8_t{0};
          tile[p][r][c] = code;
          if (!inside) continue;
          const int64_t at = gr * width + p * cols + gc;
          if (o.out) o.out[at] = code;
          if (o.y) o.y[at] = from_f<T>(v[p]);
        }
      }
    }
    if (!o.out_t) continue;  // the same for every thread
    __syncthreads();
#pragma unroll
    for (int p = 0; p < P; ++p) {
      uint8_t* out_t = o.out_t + (p * cols) * rows;
      if (whole && columns_in_vectors) {
        // Four threads write a column's 64 bytes: one 16-byte store each.
        static_assert(kTileT * kTileT / 16 == kTileThreads);
        const int j = threadIdx.x / 4, q = (threadIdx.x % 4) * 16;
        Pack<uint8_t, 16> pk;
#pragma unroll
        for (int e = 0; e < 16; ++e) pk.v[e] = tile[p][q + e][j];
        store_pack<uint8_t, 16>(out_t + (c0 + j) * rows + r0 + q, pk);
      } else {
        for (int w = threadIdx.x; w < kTileT * kTileT / 4; w += kTileThreads) {
          const int j = w / (kTileT / 4), q = (w % (kTileT / 4)) * 4;
          const int64_t oc = c0 + j, orow = r0 + q;
          if (oc >= cols || orow >= rows) continue;
          uint8_t* d = out_t + oc * rows + orow;
          if (words) {
            *reinterpret_cast<uint32_t*>(d) =
                uint32_t{tile[p][q][j]} | uint32_t{tile[p][q + 1][j]} << 8 |
                uint32_t{tile[p][q + 2][j]} << 16 | uint32_t{tile[p][q + 3][j]} << 24;
          } else {
            for (int e = 0; e < 4 && orow + e < rows; ++e) d[e] = tile[p][q + e][j];
          }
        }
      }
    }
    __syncthreads();  // the tile is rewritten by the next column tile
  }
  add_tally(t, a);
}

template <class T, __nv_fp8_interpretation_t F, class Src>
void tile_cast(const Launch& l, const Src& src, TileOut<T> o, const Fp8CastArgs& a) {
  o.vectors = src.vectors() && (!o.y || aligned16(o.y)) && (!o.out || aligned16(o.out));
  const dim3 grid(
      static_cast<unsigned>(ceil_div(o.rows, int64_t{kTileT})),
      static_cast<unsigned>(std::min(ceil_div(src.cols, int64_t{kTileT}), int64_t{65535})));
  tile_cast_kernel<T, F, Src><<<grid, kTileThreads, 0, l.stream>>>(src, o, a);
}

template <class T, __nv_fp8_interpretation_t F>
void cast_typed(const Launch& l, const Fp8CastArgs& a) {
  if (a.out_t) {
    TileOut<T> o;
    o.out = static_cast<uint8_t*>(a.out);
    o.out_t = static_cast<uint8_t*>(a.out_t);
    o.rows = a.rows;
    tile_cast<T, F>(l, CastSource<T>{static_cast<const T*>(a.x), a.cols}, o, a);
    return;
  }
  constexpr int V = kVec16<T>;
  const int64_t n = a.rows * a.cols;
  if (aligned16(a.x) && reinterpret_cast<uintptr_t>(a.out) % V == 0)
    cast_kernel<T, F, V><<<grid_for(l, ceil_div(n, V)), kBlockThreads, 0, l.stream>>>(a);
  else
    cast_kernel<T, F, 1><<<grid_for(l, n), kBlockThreads, 0, l.stream>>>(a);
}

template <class T, __nv_fp8_interpretation_t F>
void glu_fp8_typed(const Launch& l, const GluFp8Args& g) {
  TileOut<T> o;
  o.out = static_cast<uint8_t*>(g.cast.out);
  o.out_t = static_cast<uint8_t*>(g.cast.out_t);
  o.y = static_cast<T*>(g.y);
  o.rows = g.cast.rows;
  const auto* pre = static_cast<const T*>(g.pre);
  if (g.dy)
    tile_cast<T, F>(l, GluSource<T, true>{pre, static_cast<const T*>(g.dy), g.n, g.kind}, o,
                    g.cast);
  else
    tile_cast<T, F>(l, GluSource<T, false>{pre, nullptr, g.n, g.kind}, o, g.cast);
}

template <class T, __nv_fp8_interpretation_t F>
void cross_entropy_fp8_typed(const Launch& l, const CrossEntropyArgs& ce, const Fp8CastArgs& a) {
  TileOut<T> o;
  o.out = static_cast<uint8_t*>(a.out);
  o.out_t = static_cast<uint8_t*>(a.out_t);
  o.rows = ce.rows;
  tile_cast<T, F>(l,
                  CrossEntropySource<T>{static_cast<const T*>(ce.logits), ce.targets, ce.lse,
                                        ce.cols, ce.classes, ce.grad_scale, ce.loss_scale},
                  o, a);
}

// One warp per tensor. Its history moves down by one step a warp-wide chunk at a time: every
// lane reads its next element before any lane of the chunk writes, and a later chunk reads only
// elements no earlier chunk wrote, so the shift needs no copy.
__global__ void scale_update_kernel(Fp8ScaleUpdateArgs a) {
  const int64_t t = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x & 31;
  if (t >= a.tensors) return;  // the whole warp: t is the same for its lanes
  float* h = a.history + t * a.len;
  const float newest = a.amax[t];
  float window = newest;
  for (int64_t base = 0; base < a.len; base += 32) {
    const int64_t i = base + lane;
    float v = 0.0f;
    if (i < a.len) v = i + 1 < a.len ? h[i + 1] : newest;
    __syncwarp();
    if (i < a.len) {
      h[i] = v;
      window = fp8_amax_join(window, v);
    }
  }
  for (int offset = 16; offset > 0; offset >>= 1)
    window = fp8_amax_join(window, __shfl_xor_sync(0xffffffffu, window, offset));
  if (lane != 0) return;
  if (a.algorithm == AmaxAlgorithm::MostRecent) window = newest;
  const float scale = fp8_next_scale(window, a.scale[t], a.max_value, a.margin);
  a.scale[t] = scale;
  a.scale_inv[t * a.scale_inv_stride] = 1.0f / scale;
  a.amax[t] = 0.0f;
}

}  // namespace

void fp8_scale_update(const Launch& l, const Fp8ScaleUpdateArgs& a) {
  if (a.tensors == 0) return;
  constexpr int kWarps = kBlockThreads / 32;
  const auto blocks = static_cast<unsigned>(ceil_div(a.tensors, int64_t{kWarps}));
  scale_update_kernel<<<blocks, kBlockThreads, 0, l.stream>>>(a);
}

void glu_fp8(const Launch& l, const GluFp8Args& g) {
  if (g.cast.rows * g.n == 0) return;
  if (g.cast.out_dt == DType::F8E4M3) {
    HWT_DISPATCH_FLOAT(g.cast.x_dt, T, (glu_fp8_typed<T, __NV_E4M3>(l, g)));
  } else {
    HWT_DISPATCH_FLOAT(g.cast.x_dt, T, (glu_fp8_typed<T, __NV_E5M2>(l, g)));
  }
}

void cross_entropy_fp8(const Launch& l, const CrossEntropyArgs& ce, const Fp8CastArgs& a) {
  if (ce.rows * ce.cols == 0) return;
  if (a.out_dt == DType::F8E4M3) {
    HWT_DISPATCH_FLOAT(ce.dt, T, (cross_entropy_fp8_typed<T, __NV_E4M3>(l, ce, a)));
  } else {
    HWT_DISPATCH_FLOAT(ce.dt, T, (cross_entropy_fp8_typed<T, __NV_E5M2>(l, ce, a)));
  }
}

void fp8_cast(const Launch& l, const Fp8CastArgs& a) {
  if (a.rows * a.cols == 0) return;
  if (a.out_dt == DType::F8E4M3) {
    HWT_DISPATCH_FLOAT(a.x_dt, T, (cast_typed<T, __NV_E4M3>(l, a)));
  } else {
    HWT_DISPATCH_FLOAT(a.x_dt, T, (cast_typed<T, __NV_E5M2>(l, a)));
  }
}

}  // namespace hwt::cuda
