// Tensor-core attention on mma.sync (sm_80 and later) for head sizes up to 256 whose rows are
// whole 16-byte chunks (the backend pads other sizes): kernels are instantiated for head sizes
// 32, 64, 80, 96, 128 and 256, and a size in between runs the next larger one with its extra
// columns zero. bf16/f16 operands, or fp32
// operands as TF32 when the run asks for TF32 (AttnArgs::tf32; up to 128). On Hopper the
// warpgroup kernels of cuda_flash.cu take bf16/f16 with head sizes 64 to 128 (multiples of 8).
// Flash-attention style: a block of four warps owns 64 or 128 query rows (one or two tiles of 16
// a warp, so that each key/value fragment loaded feeds two products where registers allow);
// key/value tiles stream through double-buffered shared memory (cp.async) with an online
// softmax in base 2.
// Backward, deterministic: dvec = rowsum(dO ∘ O); a dQ kernel shaped like the forward; a dK/dV
// kernel whose warps own 16 key rows each while query tiles stream through (for head size 256
// two warps share the rows, each accumulating half of the columns). Grouped-query attention: a
// query head reads its K/V head in place, and a dK/dV block streams the query tiles of every
// query head of its share of the group (KvBlock), in a fixed order.
// Shared-memory tiles are row-major with rows padded by 16 bytes, so that the eight rows an
// ldmatrix (or a warp's scalar loads) reads fall in different banks.
#include <cfloat>
#include <type_traits>

#include "backend/attention_paths.h"
#include "backend/cuda/cuda_common.cuh"
#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/cuda_mma.cuh"
#include "core/integer_math.h"

namespace hwt::cuda {
namespace {

// Fragments of one 16-deep slice of the contraction, per element type. A covers 16 rows, B one
// 8-column tile. 16-bit types: one m16n8k16 product, operands loaded with ldmatrix. fp32: two
// m16n8k8 TF32 products, operands loaded one element at a time and rounded to TF32.
template <class T>
struct Frag {
  static constexpr int kA = 4, kB = 2;
};
template <>
struct Frag<float> {
  static constexpr int kA = 8, kB = 4;
};

template <class T>
constexpr int padded_row(int d) {  // elements of a shared-memory row: 16 bytes of padding
  return d + 16 / static_cast<int>(sizeof(T));
}

__device__ __forceinline__ uint32_t to_tf32(float x) {
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return r;
}

template <class T>
__device__ __forceinline__ void mma16(float (&d)[4], const uint32_t (&a)[Frag<T>::kA],
                                      const uint32_t (&b)[Frag<T>::kB]) {
  if constexpr (std::is_same_v<T, float>) {
#pragma unroll
    for (int s = 0; s < 2; ++s)
      asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, "
          "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
          : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
          : "r"(a[4 * s]), "r"(a[4 * s + 1]), "r"(a[4 * s + 2]), "r"(a[4 * s + 3]), "r"(b[2 * s]),
            "r"(b[2 * s + 1]));
  } else {
    mma<T>(d, a, b[0], b[1]);
  }
}

// A = rows row0..row0+15, columns k0..k0+15 of a row-major tile.
template <class T, int kD>
__device__ __forceinline__ void load_a(uint32_t (&a)[Frag<T>::kA], const T* tile, int row0,
                                       int k0) {
  constexpr int st = padded_row<T>(kD);
  const int lane = threadIdx.x & 31;
  if constexpr (std::is_same_v<T, float>) {
    const int g = lane >> 2, t = lane & 3;
    const float* p = tile + (row0 + g) * st + k0 + t;
#pragma unroll
    for (int s = 0; s < 2; ++s) {
      a[4 * s] = to_tf32(p[8 * s]);
      a[4 * s + 1] = to_tf32(p[8 * st + 8 * s]);
      a[4 * s + 2] = to_tf32(p[8 * s + 4]);
      a[4 * s + 3] = to_tf32(p[8 * st + 8 * s + 4]);
    }
  } else {
    ldsm_x4(a, tile + (row0 + (lane & 15)) * st + k0 + (lane >> 4) * 8);
  }
}

// B tiles n0..n0+7 and n0+8..n0+15 with B[k][n] = tile[n][k] (keys for Q·Kᵀ), k from k0.
template <class T, int kD>
__device__ __forceinline__ void load_b_rows(uint32_t (&b)[2][Frag<T>::kB], const T* tile, int n0,
                                            int k0) {
  constexpr int st = padded_row<T>(kD);
  const int lane = threadIdx.x & 31;
  if constexpr (std::is_same_v<T, float>) {
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int nt = 0; nt < 2; ++nt) {
      const float* p = tile + (n0 + 8 * nt + g) * st + k0 + t;
#pragma unroll
      for (int s = 0; s < 2; ++s) {
        b[nt][2 * s] = to_tf32(p[8 * s]);
        b[nt][2 * s + 1] = to_tf32(p[8 * s + 4]);
      }
    }
  } else {
    uint32_t r[4];
    ldsm_x4(r, tile + (n0 + (lane & 7) + ((lane >> 4) << 3)) * st + k0 + ((lane >> 3) & 1) * 8);
    b[0][0] = r[0], b[0][1] = r[1], b[1][0] = r[2], b[1][1] = r[3];
  }
}

// B tiles n0..n0+7 and n0+8..n0+15 with B[k][n] = tile[k][n] (values for P·V), k from k0. For
// fp32 the contraction order inside each group of 8 is permuted (slot t holds row 2t, slot
// t + 4 row 2t + 1) to match pack_a, which then needs no shuffles.
template <class T, int kD>
__device__ __forceinline__ void load_b_cols(uint32_t (&b)[2][Frag<T>::kB], const T* tile, int k0,
                                            int n0) {
  constexpr int st = padded_row<T>(kD);
  const int lane = threadIdx.x & 31;
  if constexpr (std::is_same_v<T, float>) {
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int nt = 0; nt < 2; ++nt) {
      const float* p = tile + (k0 + 2 * t) * st + n0 + 8 * nt + g;
#pragma unroll
      for (int s = 0; s < 2; ++s) {
        b[nt][2 * s] = to_tf32(p[8 * s * st]);
        b[nt][2 * s + 1] = to_tf32(p[(8 * s + 1) * st]);
      }
    }
  } else {
    uint32_t r[4];
    ldsm_x4_t(r, tile + (k0 + (lane & 7) + ((lane >> 3) & 1) * 8) * st + n0 + (lane >> 4) * 8);
    b[0][0] = r[0], b[0][1] = r[1], b[1][0] = r[2], b[1][1] = r[3];
  }
}

// The C fragments of two adjacent 8-column tiles (c0: columns 0-7) as the A fragment of a
// product contracting over those 16 columns.
template <class T>
__device__ __forceinline__ void pack_a(uint32_t (&a)[Frag<T>::kA], const float (&c0)[4],
                                       const float (&c1)[4]) {
  if constexpr (std::is_same_v<T, float>) {
    const float* c[2] = {c0, c1};
#pragma unroll
    for (int s = 0; s < 2; ++s) {
      a[4 * s] = to_tf32(c[s][0]);
      a[4 * s + 1] = to_tf32(c[s][2]);
      a[4 * s + 2] = to_tf32(c[s][1]);
      a[4 * s + 3] = to_tf32(c[s][3]);
    }
  } else {
    a[0] = pack2<T>(c0[0], c0[1]);
    a[1] = pack2<T>(c0[2], c0[3]);
    a[2] = pack2<T>(c1[0], c1[1]);
    a[3] = pack2<T>(c1[2], c1[3]);
  }
}

// acc[m][kN][4] = A_m · Bᵀ over the head dimension: A_m the 16 rows of tile a from
// row0 + 16 m, B the kN * 8 rows of tile b (keys or values). Each B fragment loaded serves all
// kM row tiles: shared-memory traffic per product falls with kM.
template <class T, int kD, int kM, int kN>
__device__ __forceinline__ void product_abt(float (&acc)[kM][kN][4], const T* a, int row0,
                                            const T* b) {
#pragma unroll
  for (int m = 0; m < kM; ++m)
#pragma unroll
    for (int n = 0; n < kN; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[m][n][e] = 0.0f;
#pragma unroll
  for (int kk = 0; kk < kD / 16; ++kk) {
    uint32_t af[kM][Frag<T>::kA];
#pragma unroll
    for (int m = 0; m < kM; ++m) load_a<T, kD>(af[m], a, row0 + 16 * m, kk * 16);
#pragma unroll
    for (int np = 0; np < kN / 2; ++np) {
      uint32_t bf[2][Frag<T>::kB];
      load_b_rows<T, kD>(bf, b, np * 16, kk * 16);
#pragma unroll
      for (int m = 0; m < kM; ++m) {
        mma16<T>(acc[m][2 * np], af[m], bf[0]);
        mma16<T>(acc[m][2 * np + 1], af[m], bf[1]);
      }
    }
  }
}

// acc[m][kN][4] += P_m · V: P_m packed A fragments over kK * 16 rows of tile v, columns col0
// onward.
template <class T, int kD, int kM, int kK, int kN>
__device__ __forceinline__ void product_pv(float (&acc)[kM][kN][4],
                                           const uint32_t (&p)[kM][kK][Frag<T>::kA], const T* v,
                                           int col0) {
#pragma unroll
  for (int kk = 0; kk < kK; ++kk)
#pragma unroll
    for (int np = 0; np < kN / 2; ++np) {
      uint32_t bf[2][Frag<T>::kB];
      load_b_cols<T, kD>(bf, v, kk * 16, col0 + np * 16);
#pragma unroll
      for (int m = 0; m < kM; ++m) {
        mma16<T>(acc[m][2 * np], p[m][kk], bf[0]);
        mma16<T>(acc[m][2 * np + 1], p[m][kk], bf[1]);
      }
    }
}

// Copies rows [0, kRows) of a head's slice (row r at src + r * stride, head size d) into a
// padded tile; rows at or past `valid` and columns at or past d are zero-filled, never read.
template <class T, int kD, int kRows, int kThreads>
__device__ __forceinline__ void load_rows(T* dst, const T* src, int64_t stride, int valid, int d) {
  constexpr int kPer = 16 / static_cast<int>(sizeof(T));  // elements per 16-byte chunk
  constexpr int kChunks = kD / kPer, st = padded_row<T>(kD);
#pragma unroll
  for (int n = 0; n < ceil_div(kRows * kChunks, kThreads); ++n) {
    const int c = static_cast<int>(threadIdx.x) + n * kThreads;
    if (kRows * kChunks % kThreads != 0 && c >= kRows * kChunks) break;
    const int r = c / kChunks, k = (c % kChunks) * kPer;
    const bool in = r < valid && k < d;
    cp_async16(dst + r * st + k, src + (in ? r * stride + k : 0), in ? 16 : 0);
  }
}

// Writes columns 2t, 2t + 1 of each 8-column tile of a 16-row accumulator row (r: row g or
// g + 8) times `scale`, for the tiles inside the head size.
template <class T, int kN>
__device__ __forceinline__ void store_row(T* row, const float (&acc)[kN][4], int r, float scale,
                                          int col0, int d) {
  const int t = threadIdx.x & 3;
#pragma unroll
  for (int n = 0; n < kN; ++n) {
    const int col = col0 + n * 8 + 2 * t;
    if (col >= d) continue;
    const float v0 = acc[n][2 * r] * scale, v1 = acc[n][2 * r + 1] * scale;
    if constexpr (std::is_same_v<T, float>)
      *reinterpret_cast<float2*>(row + col) = make_float2(v0, v1);
    else
      *reinterpret_cast<uint32_t*>(row + col) = pack2<T>(v0, v1);
  }
}

constexpr int kWarps = 4, kThreads = 32 * kWarps;
constexpr int kKeyRows = 16 * kWarps;  // key rows of a dK/dV block (16 a warp)
constexpr int kBwdTile = 32;           // keys (dQ) or queries (dK/dV) of a streamed backward tile

// Row tiles of 16 query rows per warp in the forward and dQ kernels: two where the fp32
// accumulators and the operand fragments of both still fit in registers (ptxas -v: no more
// than a few spilled words).
template <class T, int kD>
constexpr int fwd_m() {
  return kD * sizeof(T) <= 256 ? 2 : 1;
}
template <class T, int kD>
constexpr int dq_m() {
  return kD * sizeof(T) <= 128 ? 2 : 1;
}
// Keys of a streamed forward tile: 64, or 32 where rows are wide (registers, shared memory).
template <class T, int kD>
constexpr int fwd_tile() {
  return kD * sizeof(T) * fwd_m<T, kD>() <= 256 ? 64 : 32;
}

template <class T, int kD>
constexpr size_t fwd_smem() {
  return static_cast<size_t>(16 * kWarps * fwd_m<T, kD>() + 4 * fwd_tile<T, kD>()) *
         padded_row<T>(kD) * sizeof(T);
}
// Two owned tiles (Q and dO, or K and V), two double-buffered streamed ones, lse and dvec.
template <class T, int kD>
constexpr size_t bwd_smem(int owned_rows) {
  return static_cast<size_t>(2 * owned_rows + 4 * kBwdTile) * padded_row<T>(kD) * sizeof(T) +
         4 * kBwdTile * sizeof(float);
}

// A block of query rows (forward, dQ) and the key/value tiles streamed past it: kM row tiles of
// 16 per warp; tile t of kTile keys in buffer t % 2 of k and v, loaded while tile t - 1 is used.
template <class T, int kD, int kM, int kTile>
struct QueryBlock {
  static constexpr int kRows = 16 * kWarps * kM, st = padded_row<T>(kD);
  const Head& hd;
  const T* qkv;
  T* k;  // [2][kTile][st]
  T* v;  // [2][kTile][st]
  int q0, warp_row0, row0, warp_last, n_tiles;

  __device__ QueryBlock(const Head& h, const AttnArgs& a, T* kv)
      : hd(h), qkv(static_cast<const T*>(a.qkv)), k(kv), v(kv + 2 * kTile * st) {
    q0 = query_tile_start<kRows>();
    warp_row0 = (threadIdx.x >> 5) * 16 * kM;           // in the block's rows
    row0 = q0 + warp_row0 + ((threadIdx.x & 31) >> 2);  // rows row0 + 16 m (+ 8)
    warp_last = q0 + warp_row0 + 16 * kM - 1;
    const int kv_end = a.causal ? min(q0 + kRows, hd.L) : hd.L;
    n_tiles = ceil_div(kv_end, kTile);
  }
  // Starts loading the block's rows of a query-shaped tensor into `dst`.
  __device__ void load_own(T* dst, const T* src, int64_t stride) const {
    load_rows<T, kD, kRows, kThreads>(dst, src, stride, hd.S - q0, hd.D);
  }
  __device__ void load_tile(int t) const {
    const int j = t * kTile, buf = (t & 1) * kTile * st;
    load_rows<T, kD, kTile, kThreads>(k + buf, qkv + hd.qkv(j, 1), hd.rs, hd.S - j, hd.D);
    load_rows<T, kD, kTile, kThreads>(v + buf, qkv + hd.qkv(j, 2), hd.rs, hd.S - j, hd.D);
  }
  // Waits for tile t; once every warp is past tile t - 1, starts loading tile t + 1.
  __device__ void advance(int t) const {
    cp_async_wait_all();
    __syncthreads();
    if (t + 1 < n_tiles) load_tile(t + 1);
    cp_async_commit();
  }
  // Under a causal mask, whether tile t's keys all come after every row of this warp.
  __device__ bool skipped(const AttnArgs& a, int t) const {
    return a.causal && t * kTile > warp_last;
  }
  // Whether tile t has masked entries for this warp (past the key length, or the diagonal).
  __device__ bool needs_mask(const AttnArgs& a, int t) const {
    const int j0 = t * kTile;
    return j0 + kTile > hd.L || (a.causal && j0 + kTile - 1 > q0 + warp_row0);
  }
  __device__ const T* k_tile(int t) const { return k + (t & 1) * kTile * st; }
  __device__ const T* v_tile(int t) const { return v + (t & 1) * kTile * st; }
};

template <class T, int kD, bool kDrop>
__global__ void __launch_bounds__(kThreads) mma_fwd_kernel(AttnArgs a) {
  constexpr int kM = fwd_m<T, kD>(), kTile = fwd_tile<T, kD>(), kN = kTile / 8;
  extern __shared__ __align__(16) unsigned char smem[];
  const int tq = threadIdx.x & 3;
  const Head hd(a);
  T* sQ = reinterpret_cast<T*>(smem);
  const QueryBlock<T, kD, kM, kTile> qb(
      hd, a, sQ + QueryBlock<T, kD, kM, kTile>::kRows * padded_row<T>(kD));
  const int row0 = qb.row0;
  const float sl2 = a.scale * kLog2e;
  qb.load_own(sQ, qb.qkv + hd.qkv(qb.q0, 0), hd.rs);
  if (qb.n_tiles > 0) qb.load_tile(0);
  cp_async_commit();
  float o[kM][kD / 8][4] = {};
  float mx[kM][2], l[kM][2];
#pragma unroll
  for (int m = 0; m < kM; ++m) mx[m][0] = mx[m][1] = -INFINITY, l[m][0] = l[m][1] = 0.0f;
  for (int t = 0; t < qb.n_tiles; ++t) {
    qb.advance(t);
    if (qb.skipped(a, t)) continue;
    const int j0 = t * kTile;
    float s[kM][kN][4];
    product_abt<T, kD, kM, kN>(s, sQ, qb.warp_row0, qb.k_tile(t));
    const bool need_mask = qb.needs_mask(a, t);
    uint32_t pa[kM][kN / 2][Frag<T>::kA];
#pragma unroll
    for (int m = 0; m < kM; ++m) {
      if (need_mask) {
#pragma unroll
        for (int nt = 0; nt < kN; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int j = j0 + nt * 8 + 2 * tq + (e & 1), i = row0 + 16 * m + (e >> 1) * 8;
            if (j >= hd.L || (a.causal && j > i)) s[m][nt][e] = -INFINITY;
          }
      }
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        float tile_max = -INFINITY;
#pragma unroll
        for (int nt = 0; nt < kN; ++nt)
          tile_max = fmaxf(tile_max, fmaxf(s[m][nt][2 * r], s[m][nt][2 * r + 1]));
        tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
        tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 2));
        const float m_new = fmaxf(mx[m][r], tile_max * sl2);
        const float m_use = m_new == -INFINITY ? 0.0f : m_new;
        const float alpha = exp2_ftz(mx[m][r] - m_use);
        mx[m][r] = m_new;
        float sum = 0.0f;
#pragma unroll
        for (int nt = 0; nt < kN; ++nt) {
          float p0 = exp2_ftz(fmaf(s[m][nt][2 * r], sl2, -m_use));
          float p1 = exp2_ftz(fmaf(s[m][nt][2 * r + 1], sl2, -m_use));
          sum += p0 + p1;
          if constexpr (kDrop) {
            float f0, f1;
            drop_pair(a.drop, hd.drop_index(row0 + 16 * m + r * 8, j0 + nt * 8 + 2 * tq), f0, f1);
            p0 *= f0;
            p1 *= f1;
          }
          s[m][nt][2 * r] = p0;  // the softmax weights replace the scores
          s[m][nt][2 * r + 1] = p1;
        }
        l[m][r] = l[m][r] * alpha + sum;
#pragma unroll
        for (int dt = 0; dt < kD / 8; ++dt) {
          o[m][dt][2 * r] *= alpha;
          o[m][dt][2 * r + 1] *= alpha;
        }
      }
#pragma unroll
      for (int kk = 0; kk < kN / 2; ++kk) pack_a<T>(pa[m][kk], s[m][2 * kk], s[m][2 * kk + 1]);
    }
    product_pv<T, kD, kM, kN / 2, kD / 8>(o, pa, qb.v_tile(t), 0);
  }
  cp_async_wait_all();
  T* out = static_cast<T*>(a.out);
#pragma unroll
  for (int m = 0; m < kM; ++m)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float sum = l[m][r];
      sum += __shfl_xor_sync(0xffffffffu, sum, 1);
      sum += __shfl_xor_sync(0xffffffffu, sum, 2);
      const int i = row0 + 16 * m + r * 8;
      if (i >= hd.S) continue;
      store_row<T, kD / 8>(out + hd.out(i), o[m], r, sum > 0.0f ? 1.0f / sum : 0.0f, 0, hd.D);
      if (tq == 0) a.lse[hd.row(i)] = sum > 0.0f ? mx[m][r] * kLn2 + logf(sum) : -INFINITY;
    }
}

// dvec[b, h, i] = dO_i · O_i, the row term of the softmax backward: 8 threads per row (b, i, h)
// of out and d_out, each over 16-byte chunks.
template <class T>
__global__ void mma_dvec_kernel(AttnArgs a) {
  constexpr int kPer = 16 / static_cast<int>(sizeof(T));
  const int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  const int64_t row = t / 8, rows = a.batch * a.seq * a.heads;
  float sum = 0.0f;
  if (row < rows) {
    const T* o = static_cast<const T*>(a.out) + row * a.head_dim;
    const T* d = static_cast<const T*>(a.d_out) + row * a.head_dim;
    for (int64_t k = (t % 8) * kPer; k < a.head_dim; k += 8 * kPer) {
      float ov[kPer], dv[kPer];
      load_floats<T, kPer>(o + k, ov);
      load_floats<T, kPer>(d + k, dv);
#pragma unroll
      for (int e = 0; e < kPer; ++e) sum += ov[e] * dv[e];
    }
  }
#pragma unroll
  for (int m = 1; m < 8; m *= 2) sum += __shfl_xor_sync(0xffffffffu, sum, m);
  if (row < rows && t % 8 == 0) {
    const int64_t h = row % a.heads, bi = row / a.heads;
    a.dvec[(bi / a.seq * a.heads + h) * a.seq + bi % a.seq] = sum;
  }
}

// dQ = scale · Σ_j dS_ij K_j with dS = P ∘ (dP ∘ f - dvec), dP = dO · Vᵀ: the block's query
// rows (16 · dq_m per warp), key tiles of 32 streamed.
template <class T, int kD, bool kDrop>
__global__ void __launch_bounds__(kThreads) mma_dq_kernel(AttnArgs a) {
  constexpr int kM = dq_m<T, kD>(), kTile = kBwdTile, kN = kTile / 8;
  constexpr int kOwn = QueryBlock<T, kD, kM, kTile>::kRows, st = padded_row<T>(kD);
  extern __shared__ __align__(16) unsigned char smem[];
  const int tq = threadIdx.x & 3;
  const Head hd(a);
  T* sQ = reinterpret_cast<T*>(smem);
  T* sdO = sQ + kOwn * st;
  const QueryBlock<T, kD, kM, kTile> qb(hd, a, sdO + kOwn * st);
  const int row0 = qb.row0;
  const float sl2 = a.scale * kLog2e;
  qb.load_own(sQ, qb.qkv + hd.qkv(qb.q0, 0), hd.rs);
  qb.load_own(sdO, static_cast<const T*>(a.d_out) + hd.out(qb.q0), hd.os);
  if (qb.n_tiles > 0) qb.load_tile(0);
  cp_async_commit();
  float lse2[kM][2], dvec[kM][2];
#pragma unroll
  for (int m = 0; m < kM; ++m)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int i = row0 + 16 * m + r * 8;
      const float lse = i < hd.S ? a.lse[hd.row(i)] : -INFINITY;
      lse2[m][r] = lse == -INFINITY ? INFINITY : lse * kLog2e;  // fully masked rows: P = 0
      dvec[m][r] = i < hd.S ? a.dvec[hd.row(i)] : 0.0f;
    }
  float dq[kM][kD / 8][4] = {};
  for (int t = 0; t < qb.n_tiles; ++t) {
    qb.advance(t);
    if (qb.skipped(a, t)) continue;
    const int j0 = t * kTile;
    const T* k_s = qb.k_tile(t);
    float s[kM][kN][4], dp[kM][kN][4];
    product_abt<T, kD, kM, kN>(s, sQ, qb.warp_row0, k_s);
    product_abt<T, kD, kM, kN>(dp, sdO, qb.warp_row0, qb.v_tile(t));
    const bool need_mask = qb.needs_mask(a, t);
    uint32_t ds[kM][kN / 2][Frag<T>::kA];
#pragma unroll
    for (int m = 0; m < kM; ++m) {
#pragma unroll
      for (int nt = 0; nt < kN; ++nt)
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          const int i = row0 + 16 * m + r * 8, j = j0 + nt * 8 + 2 * tq;
          float f[2] = {1.0f, 1.0f};
          if constexpr (kDrop) drop_pair(a.drop, hd.drop_index(i, j), f[0], f[1]);
#pragma unroll
          for (int c = 0; c < 2; ++c) {
            float p = exp2_ftz(s[m][nt][2 * r + c] * sl2 - lse2[m][r]);
            if (need_mask && (j + c >= hd.L || (a.causal && j + c > i))) p = 0.0f;
            s[m][nt][2 * r + c] = p * (dp[m][nt][2 * r + c] * f[c] - dvec[m][r]);  // dS
          }
        }
#pragma unroll
      for (int kk = 0; kk < kN / 2; ++kk) pack_a<T>(ds[m][kk], s[m][2 * kk], s[m][2 * kk + 1]);
    }
    product_pv<T, kD, kM, kN / 2, kD / 8>(dq, ds, k_s, 0);
  }
  cp_async_wait_all();
  T* dst = static_cast<T*>(a.d_qkv);
#pragma unroll
  for (int m = 0; m < kM; ++m)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int i = row0 + 16 * m + r * 8;
      if (i >= hd.S) continue;
      if (a.rope_half) unrotate_row(dq[m], r, a.rope_cos, a.rope_sin, a.rope_half, i);
      store_row<T, kD / 8>(dst + hd.qkv(i, 0), dq[m], r, a.scale, 0, hd.D);
    }
}

// Warps of the dK/dV kernel: four groups of 16 key rows, each split over kParts column parts
// (two for head size 256, so that dK and dV fit in registers; both parts form the same Sᵀ).
template <int kD>
constexpr int dkv_parts() {
  return kD > 128 ? 2 : 1;
}

// dV = Σ_i Pᵀ_ji dO_i and dK = scale · Σ_i dSᵀ_ji Q_i for the block's 64 key rows, query tiles
// of 32 streamed with their lse and dvec, those of each query head of the K/V head's group in
// turn. Products in transposed form: Sᵀ = K · Qᵀ.
template <class T, int kD, bool kDrop>
__global__ void __launch_bounds__(kThreads* dkv_parts<kD>()) mma_dkv_kernel(AttnArgs a) {
  constexpr int kTile = kBwdTile, kN = kTile / 8, st = padded_row<T>(kD);
  constexpr int kParts = dkv_parts<kD>(), kCols = kD / kParts, kAll = kThreads * kParts;
  extern __shared__ __align__(16) unsigned char smem[];
  T* sK = reinterpret_cast<T*>(smem);
  T* sV = sK + kKeyRows * st;
  T* sQ = sV + kKeyRows * st;                                    // [2][kTile][st]
  T* sdO = sQ + 2 * kTile * st;                                  // [2][kTile][st]
  float* sLse = reinterpret_cast<float*>(sdO + 2 * kTile * st);  // [2][kTile]
  float* sDv = sLse + 2 * kTile;                                 // [2][kTile]
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, tq = lane & 3;
  const int kg = warp % kWarps, part = warp / kWarps;
  const KvBlock blk(a, kKeyRows);
  const Head& kvh = blk.kv;
  const int j0 = blk.j0;
  const int key0 = j0 + kg * 16 + g;  // key rows key0 and key0 + 8
  const T* qkv = static_cast<const T*>(a.qkv);
  const T* dout = static_cast<const T*>(a.d_out);
  const int q_first = a.causal ? j0 / kTile : 0;
  const int q_tiles = j0 < kvh.L ? ceil_div(kvh.S, kTile) : q_first;  // none past the length
  // Step `it` takes query tile q_first + it % per_head of the block's query head it / per_head.
  const int per_head = q_tiles - q_first, steps = blk.count * per_head;
  auto stage = [&](int it) {
    const Head hd = kvh.with_query(blk.first + it / per_head);
    const int i0 = (q_first + it % per_head) * kTile, buf = it & 1;
    load_rows<T, kD, kTile, kAll>(sQ + buf * kTile * st, qkv + hd.qkv(i0, 0), hd.rs, hd.S - i0,
                                  hd.D);
    load_rows<T, kD, kTile, kAll>(sdO + buf * kTile * st, dout + hd.out(i0), hd.os, hd.S - i0,
                                  hd.D);
    if (threadIdx.x < 2 * kTile) {  // rows past the sequence: lse +inf (P = 0), dvec 0
      const bool is_lse = threadIdx.x < kTile;
      const int r = threadIdx.x % kTile, i = i0 + r;
      float* d = (is_lse ? sLse : sDv) + buf * kTile + r;
      if (i < hd.S)
        cp_async4(d, (is_lse ? a.lse : a.dvec) + hd.row(i));
      else
        *d = is_lse ? INFINITY : 0.0f;
    }
  };
  load_rows<T, kD, kKeyRows, kAll>(sK, qkv + kvh.qkv(j0, 1), kvh.rs, kvh.S - j0, kvh.D);
  load_rows<T, kD, kKeyRows, kAll>(sV, qkv + kvh.qkv(j0, 2), kvh.rs, kvh.S - j0, kvh.D);
  if (steps > 0) stage(0);
  cp_async_commit();
  const float sl2 = a.scale * kLog2e;
  float dk[1][kCols / 8][4] = {}, dv[1][kCols / 8][4] = {};
  for (int it = 0; it < steps; ++it) {
    cp_async_wait_all();
    __syncthreads();
    if (it + 1 < steps) stage(it + 1);
    cp_async_commit();
    const Head hd = kvh.with_query(blk.first + it / per_head);
    const int i0 = (q_first + it % per_head) * kTile, buf = it & 1;
    if (a.causal && i0 + kTile - 1 < j0 + kg * 16) continue;  // queries before this warp's keys
    const T* q_s = sQ + buf * kTile * st;
    const T* do_s = sdO + buf * kTile * st;
    const float* lse = sLse + buf * kTile;
    const float* dvec = sDv + buf * kTile;
    float s[1][kN][4], dp[1][kN][4];
    product_abt<T, kD, 1, kN>(s, sK, kg * 16, q_s);
    product_abt<T, kD, 1, kN>(dp, sV, kg * 16, do_s);
    const bool need_mask =
        i0 + kTile > hd.S || j0 + kKeyRows > hd.L || (a.causal && i0 < j0 + kg * 16 + 16);
#pragma unroll
    for (int nt = 0; nt < kN; ++nt) {
      const int col = nt * 8 + 2 * tq;
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int j = key0 + r * 8;
#pragma unroll
        for (int c = 0; c < 2; ++c) {
          const int i = i0 + col + c;
          float p = exp2_ftz(s[0][nt][2 * r + c] * sl2 - lse[col + c] * kLog2e);
          if (need_mask && (i >= hd.S || j >= hd.L || (a.causal && j > i))) p = 0.0f;
          float f = 1.0f;
          if constexpr (kDrop)
            f = dropout_factor(a.drop.seed, hd.drop_index(i, j), a.drop.p, a.drop.scale);
          s[0][nt][2 * r + c] = p * f;  // Pᵀ ∘ f replaces Sᵀ
          dp[0][nt][2 * r + c] =
              p * (dp[0][nt][2 * r + c] * f - dvec[col + c]);  // dSᵀ replaces dPᵀ
        }
      }
    }
    uint32_t pa[1][kN / 2][Frag<T>::kA], da[1][kN / 2][Frag<T>::kA];
#pragma unroll
    for (int kk = 0; kk < kN / 2; ++kk) {
      pack_a<T>(pa[0][kk], s[0][2 * kk], s[0][2 * kk + 1]);
      pack_a<T>(da[0][kk], dp[0][2 * kk], dp[0][2 * kk + 1]);
    }
    product_pv<T, kD, 1, kN / 2, kCols / 8>(dv, pa, do_s, part * kCols);
    product_pv<T, kD, 1, kN / 2, kCols / 8>(dk, da, q_s, part * kCols);
  }
  cp_async_wait_all();
  T* dst = static_cast<T*>(a.d_qkv);
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int j = key0 + r * 8;
    if (j >= kvh.S) continue;
    // The rotation pairs columns of both parts when there are two (rope_fused excludes them).
    if constexpr (kParts == 1)
      if (a.rope_half) unrotate_row(dk[0], r, a.rope_cos, a.rope_sin, a.rope_half, j);
    if (a.dkv_partials) {
      store_row<float, kCols / 8>(blk.partial(a, j, 1), dk[0], r, a.scale, part * kCols, kvh.D);
      store_row<float, kCols / 8>(blk.partial(a, j, 2), dv[0], r, 1.0f, part * kCols, kvh.D);
    } else {
      store_row<T, kCols / 8>(dst + kvh.qkv(j, 1), dk[0], r, a.scale, part * kCols, kvh.D);
      store_row<T, kCols / 8>(dst + kvh.qkv(j, 2), dv[0], r, 1.0f, part * kCols, kvh.D);
    }
  }
}

// A block per `rows` query rows of each (batch, query head).
template <class Kernel>
void launch(const Launch& l, Kernel kernel, const AttnArgs& a, int threads, int rows, size_t smem) {
  cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
  const dim3 grid(static_cast<unsigned>(ceil_div(a.seq, rows)), static_cast<unsigned>(a.heads),
                  static_cast<unsigned>(a.batch));
  kernel<<<grid, threads, smem, l.stream>>>(a);
}

// The dK/dV kernel's threads, dynamic shared memory and blocks of kKeyRows keys of each
// (batch, K/V head) before the split.
template <int kD>
constexpr int dkv_threads() {
  return kThreads * dkv_parts<kD>();
}
template <class T, int kD>
size_t dkv_smem() {
  return bwd_smem<T, kD>(kKeyRows);
}
int64_t dkv_blocks(const AttnArgs& a) {
  return ceil_div(a.seq, kKeyRows) * a.batch * a.kv();
}

template <class T, int kD, bool kDrop>
int64_t dkv_splits(const Launch& l, const AttnArgs& a) {
  static const int resident = [] {  // blocks a multiprocessor holds, asked once
    const auto kernel = mma_dkv_kernel<T, kD, kDrop>;
    cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                         static_cast<int>(dkv_smem<T, kD>()));
    int n = 0;  // a failed query (0) counts as one block
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, dkv_threads<kD>(), dkv_smem<T, kD>());
    return n;
  }();
  return dkv_split_count(l, dkv_blocks(a), a.group(), resident);
}

template <class T, int kD, bool kDrop>
void run_sized(const Launch& l, const AttnArgs& a, bool backward) {
  if (!backward) {
    launch(l, mma_fwd_kernel<T, kD, kDrop>, a, kThreads, 16 * kWarps * fwd_m<T, kD>(),
           fwd_smem<T, kD>());
    return;
  }
  const int64_t threads = a.batch * a.seq * a.heads * 8;
  mma_dvec_kernel<T>
      <<<static_cast<unsigned>(ceil_div(threads, kBlockThreads)), kBlockThreads, 0, l.stream>>>(a);
  const int dq_rows = 16 * kWarps * dq_m<T, kD>();
  launch(l, mma_dq_kernel<T, kD, kDrop>, a, kThreads, dq_rows, bwd_smem<T, kD>(dq_rows));
  // A one-dimensional grid of KvBlocks.
  const auto dkv = mma_dkv_kernel<T, kD, kDrop>;
  cudaFuncSetAttribute(dkv, cudaFuncAttributeMaxDynamicSharedMemorySize,
                       static_cast<int>(dkv_smem<T, kD>()));
  dkv<<<static_cast<unsigned>(dkv_blocks(a) * a.dkv_splits), dkv_threads<kD>(), dkv_smem<T, kD>(),
        l.stream>>>(a);
}

// Calls body(T{}, head-size instance, dropout) (std::integral_constant, std::bool_constant) for
// the arguments: the next instance at or above the head size.
template <class T, class Drop, class Body>
void with_size(const AttnArgs& a, Body&& body) {
  auto size = [&](auto d) { body(T{}, d, Drop{}); };
  const int64_t d = a.head_dim;
  if (d <= 32) return size(std::integral_constant<int, 32>{});
  if (d <= 64) return size(std::integral_constant<int, 64>{});
  if (d <= 80) return size(std::integral_constant<int, 80>{});
  if (d <= 96) return size(std::integral_constant<int, 96>{});
  if (d <= 128) return size(std::integral_constant<int, 128>{});
  if constexpr (!std::is_same_v<T, float>) size(std::integral_constant<int, 256>{});
}

template <class Body>
void dispatch(const AttnArgs& a, Body&& body) {
  auto typed = [&](auto type) {
    using T = decltype(type);
    if (a.drop.active())
      with_size<T, std::true_type>(a, body);
    else
      with_size<T, std::false_type>(a, body);
  };
  switch (a.dt) {
    case DType::BF16:
      return typed(bf16{});
    case DType::F16:
      return typed(f16{});
    default:
      return typed(float{});
  }
}

void run(const Launch& l, const AttnArgs& a, bool backward) {
  dispatch(a, [&](auto type, auto size, auto drop) {
    run_sized<decltype(type), decltype(size)::value, decltype(drop)::value>(l, a, backward);
  });
}

}  // namespace

std::string_view mma_attention_unsupported(const AttnArgs& a) {
  static const bool sm80 = [] {
    int dev = 0, major = 0;
    return cudaGetDevice(&dev) == cudaSuccess &&
           cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess &&
           major >= 8;
  }();
  if (!sm80) return "the GPU is older than sm_80 (no bf16/TF32 mma.sync)";
  if (const std::string_view why = attention_slow_path(a.dt, a.tf32, a.head_dim); !why.empty())
    return why;
  if (a.head_dim != attention_kernel_head_dim(a.dt, a.head_dim))
    return "head rows are not whole 16-byte chunks (the backend pads them)";
  if (a.seq > (int64_t{1} << 30)) return "the sequence is longer than 2^30";
  for (const void* p :
       {a.qkv, static_cast<const void*>(a.out), a.d_out, static_cast<const void*>(a.d_qkv)})
    if (p && !aligned16(p)) return "a tensor is not 16-byte aligned";
  return {};
}

void mma_attention_forward(const Launch& l, const AttnArgs& a) {
  run(l, a, false);
}

void mma_attention_backward(const Launch& l, const AttnArgs& a) {
  run(l, a, true);
}

int64_t mma_dkv_splits(const Launch& l, const AttnArgs& a) {
  int64_t splits = 1;
  dispatch(a, [&](auto type, auto size, auto drop) {
    splits = dkv_splits<decltype(type), decltype(size)::value, decltype(drop)::value>(l, a);
  });
  return splits;
}

}  // namespace hwt::cuda
