// Tensor-core attention (flash-attention style) for bf16/f16 with head size 64.
// Forward: a block of 8 warps owns 128 query rows (16 per warp); key/value tiles of 64 rows
// stream through double-buffered shared memory (cp.async), S = QKᵀ and O += PV run on
// mma.sync m16n8k16 with fp32 accumulators and an online softmax in base 2.
// Backward (deterministic, no atomics): a dQ kernel shaped like the forward (warps own query
// rows) and a dK/dV kernel where warps own key rows and query tiles stream through.
#include <cfloat>
#include <type_traits>

#include "backend/cuda/cuda_common.cuh"
#include "backend/cuda/cuda_kernels.h"

namespace hwt::cuda {
namespace {

constexpr int kD = 64;         // head size
constexpr int kTile = 64;      // rows of a streamed tile
constexpr int kOwn = 128;      // rows a block owns (16 per warp)
constexpr int kLd = kD + 8;    // shared-memory row stride in elements (conflict-free ldmatrix)
constexpr int kThreads = 256;  // 8 warps
constexpr int kTileElems = kTile * kLd;
constexpr int kOwnElems = kOwn * kLd;
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void ldsm_x4(uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p))
               : "memory");
}

__device__ __forceinline__ void ldsm_x4_t(uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p))
               : "memory");
}

template <class T>
__device__ __forceinline__ void mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                    uint32_t b1) {
  if constexpr (std::is_same_v<T, bf16>) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

// Two floats as one register of two 16-bit elements (the first in the low half).
template <class T>
__device__ __forceinline__ uint32_t pack2(float lo, float hi) {
  uint32_t r;
  if constexpr (std::is_same_v<T, bf16>) {
    const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    r = *reinterpret_cast<const uint32_t*>(&v);
  } else {
    const __half2 v = __floats2half2_rn(lo, hi);
    r = *reinterpret_cast<const uint32_t*>(&v);
  }
  return r;
}

__device__ __forceinline__ void cp_async16(void* dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr(dst)), "l"(src));
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::);
}
__device__ __forceinline__ void cp_async_wait_all() {
  asm volatile("cp.async.wait_group 0;\n" ::: "memory");
}

// Copies rows [0, kRows) of a tile (row r at src + r * stride) to shared memory; rows at or
// past `valid` are zero-filled.
template <int kRows, class T>
__device__ __forceinline__ void load_tile(T* dst, const T* src, int64_t stride, int64_t valid) {
  constexpr int kChunks = kD / 8;  // 16-byte chunks per row
  for (int c = threadIdx.x; c < kRows * kChunks; c += kThreads) {
    const int r = c / kChunks, k = (c % kChunks) * 8;
    T* d = dst + r * kLd + k;
    if (r < valid)
      cp_async16(d, src + r * stride + k);
    else
      *reinterpret_cast<int4*>(d) = make_int4(0, 0, 0, 0);
  }
}

// A-operand fragments of the warp's 16 rows of a [64][kLd] tile, for all kD/16 k-steps.
template <class T>
__device__ __forceinline__ void load_a_frags(uint32_t (&f)[kD / 16][4], const T* tile, int warp,
                                             int lane) {
#pragma unroll
  for (int ks = 0; ks < kD / 16; ++ks)
    ldsm_x4(f[ks], tile + (warp * 16 + (lane & 15)) * kLd + ks * 16 + (lane >> 4) * 8);
}

// acc[8][4] = A (16 x kD, fragments) · Bᵀ where B is a [64][kLd] tile whose rows are the output
// columns (K rows for S = QKᵀ).
template <class T>
__device__ __forceinline__ void mma_abt(float (&acc)[8][4], const uint32_t (&a)[kD / 16][4],
                                        const T* tile, int lane) {
#pragma unroll
  for (int nt = 0; nt < 8; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) acc[nt][e] = 0.0f;
#pragma unroll
  for (int ks = 0; ks < kD / 16; ++ks) {
    uint32_t b[4][4];  // all fragments of the k-step first, so loads overlap the MMAs
#pragma unroll
    for (int np = 0; np < 4; ++np)
      ldsm_x4(b[np], tile + (np * 16 + (lane & 7) + (lane >> 4) * 8) * kLd + ks * 16 +
                         ((lane >> 3) & 1) * 8);
#pragma unroll
    for (int np = 0; np < 4; ++np) {
      mma<T>(acc[2 * np], a[ks], b[np][0], b[np][1]);
      mma<T>(acc[2 * np + 1], a[ks], b[np][2], b[np][3]);
    }
  }
}

// acc[kD/8][4] += P (16 x 64, as C fragments p[8][4]) · B where B is a [64][kLd] tile whose rows
// are the contraction index (V rows for O += PV).
template <class T>
__device__ __forceinline__ void mma_pb(float (&acc)[kD / 8][4], const float (&p)[8][4],
                                       const T* tile, int lane) {
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) {
    const uint32_t a[4] = {
        pack2<T>(p[2 * kk][0], p[2 * kk][1]), pack2<T>(p[2 * kk][2], p[2 * kk][3]),
        pack2<T>(p[2 * kk + 1][0], p[2 * kk + 1][1]), pack2<T>(p[2 * kk + 1][2], p[2 * kk + 1][3])};
    uint32_t b[kD / 16][4];
#pragma unroll
    for (int dp = 0; dp < kD / 16; ++dp)
      ldsm_x4_t(b[dp], tile + (kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8) * kLd + dp * 16 +
                           (lane >> 4) * 8);
#pragma unroll
    for (int dp = 0; dp < kD / 16; ++dp) {
      mma<T>(acc[2 * dp], a, b[dp][0], b[dp][1]);
      mma<T>(acc[2 * dp + 1], a, b[dp][2], b[dp][3]);
    }
  }
}

// Dropout multipliers of elements `index` and `index + 1`.
__device__ __forceinline__ void drop_pair(const DropArgs& d, uint64_t index, float& f0, float& f1) {
  const int k = static_cast<int>(index & 3);
  const Philox4 r = philox4x32(index >> 2, d.seed);
  f0 = philox_word_uniform(r, k) >= d.p ? d.scale : 0.0f;
  if (k < 3) {
    f1 = philox_word_uniform(r, k + 1) >= d.p ? d.scale : 0.0f;
  } else {
    const Philox4 r2 = philox4x32((index >> 2) + 1, d.seed);
    f1 = philox_word_uniform(r2, 0) >= d.p ? d.scale : 0.0f;
  }
}

struct Head {
  int64_t S, H, L, b, h, rs;  // rs: qkv row stride
  __device__ Head(const AttnArgs& a) : S(a.seq), H(a.heads), b(blockIdx.z), h(blockIdx.y) {
    rs = 3 * a.heads * kD;
    L = a.key_lengths ? a.key_lengths[b] : a.seq;
    L = L < 0 ? 0 : (L > S ? S : L);
  }
  __device__ int64_t qkv(int64_t t, int part) const {
    return (b * S + t) * rs + part * H * kD + h * kD;
  }
  __device__ int64_t out(int64_t t) const { return (b * S + t) * H * kD + h * kD; }
  __device__ int64_t row(int64_t i) const { return (b * H + h) * S + i; }
};

// The query tile of this block: later (longer, under a causal mask) tiles are scheduled first.
__device__ __forceinline__ int64_t tile_start() {
  return static_cast<int64_t>(gridDim.x - 1 - blockIdx.x) * kOwn;
}

template <class T>
__global__ void __launch_bounds__(kThreads) flash_fwd_kernel(AttnArgs a) {
  extern __shared__ __align__(16) unsigned char smem[];
  T* sQ = reinterpret_cast<T*>(smem);
  T* sK = sQ + kOwnElems;       // two buffers
  T* sV = sK + 2 * kTileElems;  // two buffers
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, tq = lane & 3;
  const Head hd(a);
  const int64_t q0 = tile_start();
  const T* qkv = static_cast<const T*>(a.qkv);
  const int64_t kv_end = a.causal ? (q0 + kOwn < hd.L ? q0 + kOwn : hd.L) : hd.L;
  const int n_tiles = static_cast<int>((kv_end + kTile - 1) / kTile);
  load_tile<kOwn>(sQ, qkv + hd.qkv(q0, 0), hd.rs, hd.S - q0);
  cp_async_commit();
  if (n_tiles > 0) {
    load_tile<kTile>(sK, qkv + hd.qkv(0, 1), hd.rs, hd.S);
    load_tile<kTile>(sV, qkv + hd.qkv(0, 2), hd.rs, hd.S);
  }
  cp_async_commit();

  const int64_t row0 = q0 + warp * 16 + g;  // rows row0 and row0 + 8
  const float sl2 = a.scale * kLog2e;
  uint32_t qf[kD / 16][4];
  float o[kD / 8][4] = {};
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
  for (int t = 0; t < n_tiles; ++t) {
    cp_async_wait_all();
    __syncthreads();
    if (t == 0) load_a_frags(qf, sQ, warp, lane);
    if (t + 1 < n_tiles) {
      const int64_t j1 = static_cast<int64_t>(t + 1) * kTile;
      load_tile<kTile>(sK + ((t + 1) & 1) * kTileElems, qkv + hd.qkv(j1, 1), hd.rs, hd.S - j1);
      load_tile<kTile>(sV + ((t + 1) & 1) * kTileElems, qkv + hd.qkv(j1, 2), hd.rs, hd.S - j1);
    }
    cp_async_commit();
    const int64_t j0 = static_cast<int64_t>(t) * kTile;
    if (a.causal && j0 > q0 + warp * 16 + 15) continue;  // every key after this warp's rows
    float s[8][4];
    mma_abt<T>(s, qf, sK + (t & 1) * kTileElems, lane);
    const bool need_mask = j0 + kTile > hd.L || (a.causal && j0 + kTile - 1 > q0 + warp * 16);
#pragma unroll
    for (int nt = 0; nt < 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        float v = s[nt][e] * sl2;
        if (need_mask) {
          const int64_t j = j0 + nt * 8 + 2 * tq + (e & 1), i = row0 + (e >> 1) * 8;
          if (j >= hd.L || (a.causal && j > i)) v = -INFINITY;
        }
        s[nt][e] = v;
      }
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float mx = -INFINITY;
#pragma unroll
      for (int nt = 0; nt < 8; ++nt) mx = fmaxf(mx, fmaxf(s[nt][2 * r], s[nt][2 * r + 1]));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      const float m_new = fmaxf(m[r], mx);
      const float m_use = m_new == -INFINITY ? 0.0f : m_new;
      const float alpha = exp2f(m[r] - m_use);
      m[r] = m_new;
      float sum = 0.0f;
#pragma unroll
      for (int nt = 0; nt < 8; ++nt) {
        s[nt][2 * r] = exp2f(s[nt][2 * r] - m_use);
        s[nt][2 * r + 1] = exp2f(s[nt][2 * r + 1] - m_use);
        sum += s[nt][2 * r] + s[nt][2 * r + 1];
      }
      l[r] = l[r] * alpha + sum;
#pragma unroll
      for (int dt = 0; dt < kD / 8; ++dt) {
        o[dt][2 * r] *= alpha;
        o[dt][2 * r + 1] *= alpha;
      }
      if (a.drop.active()) {
        const int64_t i = row0 + r * 8;
#pragma unroll
        for (int nt = 0; nt < 8; ++nt) {
          const int64_t j = j0 + nt * 8 + 2 * tq;
          float f0, f1;
          drop_pair(a.drop, static_cast<uint64_t>(hd.row(i) * hd.S + j), f0, f1);
          s[nt][2 * r] *= f0;
          s[nt][2 * r + 1] *= f1;
        }
      }
    }
    mma_pb<T>(o, s, sV + (t & 1) * kTileElems, lane);
  }
  cp_async_wait_all();  // nothing may be in flight at exit (no tiles: Q alone)
  T* out = static_cast<T*>(a.out);
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float sum = l[r];
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    sum += __shfl_xor_sync(0xffffffffu, sum, 2);
    const int64_t i = row0 + r * 8;
    if (i >= hd.S) continue;
    const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
    T* orow = out + hd.out(i);
#pragma unroll
    for (int dt = 0; dt < kD / 8; ++dt)
      *reinterpret_cast<uint32_t*>(orow + dt * 8 + 2 * tq) =
          pack2<T>(o[dt][2 * r] * inv, o[dt][2 * r + 1] * inv);
    if (tq == 0) a.lse[hd.row(i)] = sum > 0.0f ? m[r] * kLn2 + logf(sum) : -INFINITY;
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads) flash_dq_kernel(AttnArgs a) {
  extern __shared__ __align__(16) unsigned char smem[];
  T* sQ = reinterpret_cast<T*>(smem);
  T* sdO = sQ + kOwnElems;
  T* sK = sdO + kOwnElems;      // two buffers
  T* sV = sK + 2 * kTileElems;  // two buffers
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, tq = lane & 3;
  const Head hd(a);
  const int64_t q0 = tile_start();
  const T* qkv = static_cast<const T*>(a.qkv);
  const T* dout = static_cast<const T*>(a.d_out);
  const int64_t kv_end = a.causal ? (q0 + kOwn < hd.L ? q0 + kOwn : hd.L) : hd.L;
  const int n_tiles = static_cast<int>((kv_end + kTile - 1) / kTile);
  load_tile<kOwn>(sQ, qkv + hd.qkv(q0, 0), hd.rs, hd.S - q0);
  load_tile<kOwn>(sdO, dout + hd.out(q0), hd.H * kD, hd.S - q0);
  cp_async_commit();
  if (n_tiles > 0) {
    load_tile<kTile>(sK, qkv + hd.qkv(0, 1), hd.rs, hd.S);
    load_tile<kTile>(sV, qkv + hd.qkv(0, 2), hd.rs, hd.S);
  }
  cp_async_commit();

  const int64_t row0 = q0 + warp * 16 + g;
  const float sl2 = a.scale * kLog2e;
  float lse2[2], dvec[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int64_t i = row0 + r * 8;
    const float lse = i < hd.S ? a.lse[hd.row(i)] : -INFINITY;
    lse2[r] = lse == -INFINITY ? INFINITY : lse * kLog2e;
    dvec[r] = i < hd.S ? a.dvec[hd.row(i)] : 0.0f;
  }
  uint32_t qf[kD / 16][4], df[kD / 16][4];
  float dq[kD / 8][4] = {};
  for (int t = 0; t < n_tiles; ++t) {
    cp_async_wait_all();
    __syncthreads();
    if (t == 0) {
      load_a_frags(qf, sQ, warp, lane);
      load_a_frags(df, sdO, warp, lane);
    }
    if (t + 1 < n_tiles) {
      const int64_t j1 = static_cast<int64_t>(t + 1) * kTile;
      load_tile<kTile>(sK + ((t + 1) & 1) * kTileElems, qkv + hd.qkv(j1, 1), hd.rs, hd.S - j1);
      load_tile<kTile>(sV + ((t + 1) & 1) * kTileElems, qkv + hd.qkv(j1, 2), hd.rs, hd.S - j1);
    }
    cp_async_commit();
    const int64_t j0 = static_cast<int64_t>(t) * kTile;
    if (a.causal && j0 > q0 + warp * 16 + 15) continue;  // every key after this warp's rows
    const T* k_s = sK + (t & 1) * kTileElems;
    float s[8][4], dp[8][4];
    mma_abt<T>(s, qf, k_s, lane);
    mma_abt<T>(dp, df, sV + (t & 1) * kTileElems, lane);
    const bool need_mask = j0 + kTile > hd.L || (a.causal && j0 + kTile - 1 > q0 + warp * 16);
#pragma unroll
    for (int nt = 0; nt < 8; ++nt)
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int64_t i = row0 + r * 8, j = j0 + nt * 8 + 2 * tq;
        float f0 = 1.0f, f1 = 1.0f;
        if (a.drop.active()) drop_pair(a.drop, static_cast<uint64_t>(hd.row(i) * hd.S + j), f0, f1);
#pragma unroll
        for (int c = 0; c < 2; ++c) {
          float p = exp2f(s[nt][2 * r + c] * sl2 - lse2[r]);
          if (need_mask && (j + c >= hd.L || (a.causal && j + c > i))) p = 0.0f;
          s[nt][2 * r + c] = p * (dp[nt][2 * r + c] * (c ? f1 : f0) - dvec[r]);
        }
      }
    mma_pb<T>(dq, s, k_s, lane);
  }
  cp_async_wait_all();
  T* dst = static_cast<T*>(a.d_qkv);
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int64_t i = row0 + r * 8;
    if (i >= hd.S) continue;
    T* row = dst + hd.qkv(i, 0);
#pragma unroll
    for (int dt = 0; dt < kD / 8; ++dt)
      *reinterpret_cast<uint32_t*>(row + dt * 8 + 2 * tq) =
          pack2<T>(dq[dt][2 * r] * a.scale, dq[dt][2 * r + 1] * a.scale);
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads) flash_dkv_kernel(AttnArgs a) {
  extern __shared__ __align__(16) unsigned char smem[];
  T* sK = reinterpret_cast<T*>(smem);
  T* sV = sK + kOwnElems;
  T* sQ = sV + kOwnElems;                                        // two buffers
  T* sdO = sQ + 2 * kTileElems;                                  // two buffers
  float* sLse = reinterpret_cast<float*>(sdO + 2 * kTileElems);  // [2][64], log2 units
  float* sDv = sLse + 2 * kTile;                                 // [2][64]
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, tq = lane & 3;
  const Head hd(a);
  const int64_t j0 = static_cast<int64_t>(blockIdx.x) * kOwn;
  const T* qkv = static_cast<const T*>(a.qkv);
  const T* dout = static_cast<const T*>(a.d_out);
  T* dst = static_cast<T*>(a.d_qkv);
  const int64_t key0 = j0 + warp * 16 + g;  // key rows key0 and key0 + 8

  const int64_t q_first = a.causal ? j0 / kTile : 0;
  const int64_t q_tiles = j0 < hd.L ? (hd.S + kTile - 1) / kTile : q_first;
  auto stage = [&](int64_t qt, int buf) {
    const int64_t i0 = qt * kTile;
    load_tile<kTile>(sQ + buf * kTileElems, qkv + hd.qkv(i0, 0), hd.rs, hd.S - i0);
    load_tile<kTile>(sdO + buf * kTileElems, dout + hd.out(i0), hd.H * kD, hd.S - i0);
    for (int r = threadIdx.x; r < kTile; r += kThreads) {
      const int64_t i = i0 + r;
      const float lse = i < hd.S ? a.lse[hd.row(i)] : -INFINITY;
      sLse[buf * kTile + r] = lse == -INFINITY ? INFINITY : lse * kLog2e;
      sDv[buf * kTile + r] = i < hd.S ? a.dvec[hd.row(i)] : 0.0f;
    }
  };
  load_tile<kOwn>(sK, qkv + hd.qkv(j0, 1), hd.rs, hd.S - j0);
  load_tile<kOwn>(sV, qkv + hd.qkv(j0, 2), hd.rs, hd.S - j0);
  if (q_first < q_tiles) stage(q_first, 0);
  cp_async_commit();

  const float sl2 = a.scale * kLog2e;
  uint32_t kf[kD / 16][4], vf[kD / 16][4];
  float dk[kD / 8][4] = {}, dv[kD / 8][4] = {};
  for (int64_t qt = q_first; qt < q_tiles; ++qt) {
    const int buf = static_cast<int>((qt - q_first) & 1);
    cp_async_wait_all();
    __syncthreads();
    if (qt == q_first) {
      load_a_frags(kf, sK, warp, lane);
      load_a_frags(vf, sV, warp, lane);
    }
    if (qt + 1 < q_tiles) stage(qt + 1, buf ^ 1);
    cp_async_commit();
    const int64_t i0 = qt * kTile;
    if (a.causal && i0 + kTile - 1 < j0 + warp * 16) continue;  // every query before these keys
    const T* q_s = sQ + buf * kTileElems;
    const T* do_s = sdO + buf * kTileElems;
    const float* lse2 = sLse + buf * kTile;
    const float* dvec = sDv + buf * kTile;
    float st[8][4], dpt[8][4];
    mma_abt<T>(st, kf, q_s, lane);
    mma_abt<T>(dpt, vf, do_s, lane);
    const bool need_mask =
        i0 + kTile > hd.S || j0 + kOwn > hd.L || (a.causal && i0 < j0 + warp * 16 + 16);
    float pm[8][4];
#pragma unroll
    for (int nt = 0; nt < 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int col = nt * 8 + 2 * tq + (e & 1);
        const int64_t i = i0 + col, j = key0 + (e >> 1) * 8;
        float p = exp2f(st[nt][e] * sl2 - lse2[col]);
        if (need_mask && (i >= hd.S || j >= hd.L || (a.causal && j > i))) p = 0.0f;
        const float f =
            a.drop.active()
                ? dropout_factor(a.drop.seed, static_cast<uint64_t>(hd.row(i) * hd.S + j), a.drop.p,
                                 a.drop.scale)
                : 1.0f;
        pm[nt][e] = p * f;
        st[nt][e] = p * (dpt[nt][e] * f - dvec[col]);
      }
    mma_pb<T>(dv, pm, do_s, lane);
    mma_pb<T>(dk, st, q_s, lane);
  }
  cp_async_wait_all();
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int64_t j = key0 + r * 8;
    if (j >= hd.S) continue;
    T* krow = dst + hd.qkv(j, 1);
    T* vrow = dst + hd.qkv(j, 2);
#pragma unroll
    for (int dt = 0; dt < kD / 8; ++dt) {
      *reinterpret_cast<uint32_t*>(krow + dt * 8 + 2 * tq) =
          pack2<T>(dk[dt][2 * r] * a.scale, dk[dt][2 * r + 1] * a.scale);
      *reinterpret_cast<uint32_t*>(vrow + dt * 8 + 2 * tq) =
          pack2<T>(dv[dt][2 * r], dv[dt][2 * r + 1]);
    }
  }
}

constexpr size_t kFwdSmem = (kOwnElems + 4 * kTileElems) * 2;
constexpr size_t kDqSmem = (2 * kOwnElems + 4 * kTileElems) * 2;
constexpr size_t kDkvSmem = (2 * kOwnElems + 4 * kTileElems) * 2 + 4 * kTile * sizeof(float);

template <class Kernel>
void launch(const Launch& l, Kernel kernel, const AttnArgs& a, size_t smem) {
  cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
  const dim3 grid(static_cast<unsigned>((a.seq + kOwn - 1) / kOwn), static_cast<unsigned>(a.heads),
                  static_cast<unsigned>(a.batch));
  kernel<<<grid, kThreads, smem, l.stream>>>(a);
}

}  // namespace

bool flash_supported(const AttnArgs& a) {
  if ((a.dt != DType::BF16 && a.dt != DType::F16) || a.head_dim != kD) return false;
  for (const void* p :
       {a.qkv, static_cast<const void*>(a.out), a.d_out, static_cast<const void*>(a.d_qkv)})
    if (p && !aligned16(p)) return false;
  return true;
}

void flash_forward(const Launch& l, const AttnArgs& a) {
  if (a.dt == DType::BF16)
    launch(l, flash_fwd_kernel<bf16>, a, kFwdSmem);
  else
    launch(l, flash_fwd_kernel<f16>, a, kFwdSmem);
}

void flash_backward(const Launch& l, const AttnArgs& a) {
  if (a.dt == DType::BF16) {
    launch(l, flash_dq_kernel<bf16>, a, kDqSmem);
    launch(l, flash_dkv_kernel<bf16>, a, kDkvSmem);
  } else {
    launch(l, flash_dq_kernel<f16>, a, kDqSmem);
    launch(l, flash_dkv_kernel<f16>, a, kDkvSmem);
  }
}

}  // namespace hwt::cuda
