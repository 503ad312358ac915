// Tensor-core attention (flash-attention style) for bf16/f16 with head sizes 64 and 128, on
// Hopper's warpgroup products (wgmma, cuda_wgmma.cuh): every operand tile sits in shared memory
// in the 128-byte swizzled layout, read there by the tensor cores (A operands of P·V-like
// products come from registers), so a 16 x 8 output tile no longer costs its own shared-memory
// loads. A tile of 128-element rows is stored as two panels of 64 columns, each a swizzled tile
// of its own: products over the head dimension take their k-steps panel by panel, and products
// whose output columns are the head dimension are issued once per panel. Head sizes between 64
// and 128 (multiples of 8, e.g. 80 or 96) run the 128-wide instance: they load zero columns past
// the head, which change neither scores nor outputs, and store only the head's columns.
// Forward: a block of two warpgroups owns 128 query rows (64 each, 16 per warp); key/value tiles
// of 64 rows stream through double-buffered shared memory (cp.async), S = QKᵀ and O += PV with
// fp32 accumulators and an online softmax in base 2 that overlaps the previous tile's PV.
// Backward, deterministic (no atomics): a dQ kernel shaped like the forward (warps own query
// rows, key tiles stream through) and a dK/dV kernel (warps own key rows, query tiles stream
// through). Both work on half tiles of 32 columns so that S, dP and the packed P / dS operands
// stay small: fewer registers, more warps in flight. Backward with atomics (AttnArgs::dq_accum):
// the dK/dV kernel also forms dQ += dS·K from its dS (with mma.sync: 32 query rows are below
// wgmma's 64) and adds it to an fp32 accumulator with vector atomics; the sum order then varies.
// Grouped-query attention: query heads read their K/V head in place; a dK/dV block streams the
// query tiles of every query head of its share of its K/V head's group (KvBlock: all of it, or
// a part when attention_dkv_splits shares groups out), in a fixed order.
#include <cfloat>
#include <type_traits>

#include "backend/cuda/cuda_common.cuh"
#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/cuda_mma.cuh"
#include "backend/cuda/cuda_wgmma.cuh"
#include "core/integer_math.h"

namespace hwt::cuda {
namespace {

constexpr int kKStepBytes = 16 * 2;
constexpr int kTile = 64;    // rows of a streamed tile
constexpr int kHalf = 32;    // columns the backward works on at once
constexpr int kWgRows = 64;  // output rows of a warpgroup
// Elements of a streamed tile with rows of d elements.
constexpr int tile_elems(int d) {
  return kTile * d;
}

// The head's columns of a kD-wide tile: all of the 64-wide instance's (a constant, so that its
// kernels keep their registers), a prefix of the 128-wide one's.
template <int kD>
__device__ __forceinline__ int head_cols(const AttnArgs& a) {
  return kD == 64 ? 64 : static_cast<int>(a.head_dim);
}

// Element (row, col) of a tile of kRows rows and panels of kSwRow columns; `tile` may point at
// a row (a multiple of 8) inside it.
template <int kRows, int kD, class T>
__device__ __forceinline__ T* tile_at(T* tile, int row, int col) {
  if constexpr (kD == kSwRow)
    return sw_at(tile, row, col);
  else
    return sw_at(tile + (col / kSwRow) * (kRows * kSwRow), row, col % kSwRow);
}
// A row inside a tile, for the products and tile_at.
template <class T>
__device__ __forceinline__ T* tile_row(T* tile, int row) {
  return tile + row * kSwRow;
}

// The kernels' dynamic shared memory, rounded up to the 1024 bytes the swizzle pattern repeats
// over (the launch asks for kSmemAlign more).
constexpr size_t kSmemAlign = 1024;
template <class T>
__device__ __forceinline__ T* aligned_smem(unsigned char* smem) {
  return reinterpret_cast<T*>(
      smem + ((kSmemAlign - (smem_addr(smem) & (kSmemAlign - 1))) & (kSmemAlign - 1)));
}

// Stores four 8x8 matrices transposed: register i of each lane, in mma C-fragment layout, goes
// to the matrix whose rows lanes 8i..8i+7 address.
__device__ __forceinline__ void stsm_x4_t(void* p, const uint32_t (&r)[4]) {
  asm volatile(
      "stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1,%2,%3,%4};\n" ::"r"(smem_addr(p)),
      "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3])
      : "memory");
}

// Copies rows [0, kRows) of a tile (row r at src + r * stride, `cols` columns) to a swizzled
// shared-memory tile kD wide with kThreads threads (the block; a fixed trip count keeps the
// address arithmetic to a few adds); rows at or past `valid` and columns at or past `cols` are
// zero-filled, their source never read.
template <int kRows, int kThreads, int kD, class T>
__device__ __forceinline__ void load_tile(T* dst, const T* src, int64_t stride, int64_t valid,
                                          int cols) {
  constexpr int kChunks = kD / 8;  // 16-byte chunks per row
  static_assert(kRows * kChunks % kThreads == 0 && kThreads % kChunks == 0);
  const int k = static_cast<int>(threadIdx.x % kChunks) * 8, r0 = threadIdx.x / kChunks;
  const bool col_in = k < cols;
#pragma unroll
  for (int n = 0; n < kRows * kChunks / kThreads; ++n) {
    const int r = r0 + n * (kThreads / kChunks);
    const bool in = r < valid && col_in;
    cp_async16(tile_at<kRows, kD>(dst, r, k), src + (in ? r * stride : 0) + k, in ? 16 : 0);
  }
}

// acc[kD/8][4] += A · B for the warpgroup: A (64 x kK*16) in packed fragments, B's kK * 16
// contraction rows the rows of `tile` (kRows rows) from `b` on (V rows for O += PV), one
// product per 64-column panel.
template <class T, int kK, int kRows, int kD>
__device__ __forceinline__ void wgmma_pb(float (&acc)[kD / 8][4], const uint32_t (&a)[kK][4],
                                         const T* b) {
  constexpr int kPanels = kD / kSwRow;
  uint64_t desc[kPanels];
#pragma unroll
  for (int p = 0; p < kPanels; ++p) desc[p] = sw128_desc(b + p * kRows * kSwRow);
  wg_fence();  // acc and a were written by ordinary instructions
#pragma unroll
  for (int kk = 0; kk < kK; ++kk)
#pragma unroll
    for (int p = 0; p < kPanels; ++p)
      wgmma_rs_n64_t<T>(reinterpret_cast<float(&)[8][4]>(acc[p * 8]), a[kk],
                        desc_plus(desc[p], kk * 16 * kSwRow * 2));
}

// acc[kN][4] = A · Bᵀ for the warpgroup over the head dimension (kD): A the 64 rows from `a`
// of a tile of kRowsA rows (queries for S), B the kN * 8 rows from `b` of a tile of kRowsB rows
// (keys). Only issued.
template <class T, int kN, int kRowsA, int kRowsB, int kD>
__device__ __forceinline__ void wgmma_abt(float (&acc)[kN][4], const T* a, const T* b) {
  constexpr int kPanels = kD / kSwRow;
  uint64_t da[kPanels], db[kPanels];
#pragma unroll
  for (int p = 0; p < kPanels; ++p) {
    da[p] = sw128_desc(a + p * kRowsA * kSwRow);
    db[p] = sw128_desc(b + p * kRowsB * kSwRow);
  }
  wg_fence();
#pragma unroll
  for (int ks = 0; ks < kD / 16; ++ks) {
    const int p = ks * 16 / kSwRow, step = ks % (kSwRow / 16) * kKStepBytes;
    const uint64_t ka = desc_plus(da[p], step), kb = desc_plus(db[p], step);
    if constexpr (kN == 8)
      wgmma_ss_n64<T>(acc, ka, kb, ks > 0);
    else
      wgmma_ss_n32<T>(acc, ka, kb, ks > 0);
  }
}

// Key/value tiles streamed through kStages shared-memory buffers with cp.async: tile t lives in
// buffer t % kStages, and up to kStages - 1 tiles load ahead of the one in use. Three stages
// measured no faster than two on the H200 (forward and dQ at GPT-2 shapes, mma.sync kernels),
// so two it is.
constexpr int kStages = 2;

template <class T, int kThreads, int kD>
struct KvStream {
  T* k;  // [kStages] tiles
  T* v;  // [kStages] tiles
  const T* qkv;
  const Head& hd;
  int n_tiles;
  int cols;  // head_cols

  // Start loading K (or V) of tile t when it exists.
  __device__ void load_k(int t) { load(k, t, 1); }
  __device__ void load_v(int t) { load(v, t, 2); }
  // Starts loading tile t when it exists; commits a (possibly empty) group either way.
  __device__ void issue(int t) {
    load_k(t);
    load_v(t);
    cp_async_commit();
  }
  __device__ void prologue() {
    for (int t = 0; t < kStages - 1; ++t) issue(t);
  }
  // Waits for tile t (and every group committed before it); once all warps are past tile t - 1,
  // reuses its buffer for tile t + kStages - 1.
  __device__ void advance(int t) {
    cp_async_wait<kStages - 2>();
    fence_async_smem();
    __syncthreads();
    issue(t + kStages - 1);
  }
  __device__ const T* k_tile(int t) const { return k + (t % kStages) * tile_elems(kD); }
  __device__ const T* v_tile(int t) const { return v + (t % kStages) * tile_elems(kD); }

 private:
  __device__ void load(T* bufs, int t, int part) {
    if (t >= n_tiles) return;
    const int j = t * kTile;
    load_tile<kTile, kThreads, kD>(bufs + (t % kStages) * tile_elems(kD), qkv + hd.qkv(j, part),
                                   hd.rs, hd.S - j, cols);
  }
};

constexpr int kFwdWarps = 8;
constexpr int kFwdOwn = 16 * kFwdWarps;

// The forward's online softmax over one key tile of scores s (unscaled; masked here) for the
// warp's rows row0 and row0 + 8: P, packed as the A operand of P·V, and the factor alpha the
// running output must be scaled by; m (base-2 scaled maximum) and l (sum) are updated.
// Scores stay unscaled: the maximum commutes with the positive scale, and each weight is then
// one FFMA and one EX2, 2^(s * scale * log2 e - m).
template <class T, bool kDrop>
__device__ __forceinline__ void softmax_tile(float (&s)[8][4], uint32_t (&pa)[4][4],
                                             float (&alpha)[2], float (&m)[2], float (&l)[2],
                                             const AttnArgs& a, const Head& hd, int row0, int j0,
                                             bool need_mask, int tq) {
  const float sl2 = a.scale * kLog2e;
  if (need_mask) {  // compiles to a branch here (two copies of the loop serialize the products)
#pragma unroll
    for (int nt = 0; nt < 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int j = j0 + nt * 8 + 2 * tq + (e & 1), i = row0 + (e >> 1) * 8;
        if (j >= hd.L || (a.causal && j > i)) s[nt][e] = -INFINITY;
      }
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    // Maximum and sum as trees: short dependency chains.
    float part[8];
#pragma unroll
    for (int nt = 0; nt < 8; ++nt) part[nt] = fmaxf(s[nt][2 * r], s[nt][2 * r + 1]);
#pragma unroll
    for (int w = 4; w > 0; w /= 2)
#pragma unroll
      for (int i = 0; i < w; ++i) part[i] = fmaxf(part[i], part[i + w]);
    float mx = part[0];
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
    const float m_new = fmaxf(m[r], mx * sl2);
    const float m_use = m_new == -INFINITY ? 0.0f : m_new;
    alpha[r] = exp2_ftz(m[r] - m_use);
    m[r] = m_new;
#pragma unroll
    for (int nt = 0; nt < 8; ++nt) {
      float p0 = exp2_ftz(fmaf(s[nt][2 * r], sl2, -m_use));
      float p1 = exp2_ftz(fmaf(s[nt][2 * r + 1], sl2, -m_use));
      part[nt] = p0 + p1;
      if constexpr (kDrop) {
        float f0, f1;
        drop_pair(a.drop, hd.drop_index(row0 + r * 8, j0 + nt * 8 + 2 * tq), f0, f1);
        p0 *= f0;
        p1 *= f1;
      }
      pa[nt >> 1][pack_slot(nt, r)] = pack2<T>(p0, p1);
    }
#pragma unroll
    for (int w = 4; w > 0; w /= 2)
#pragma unroll
      for (int i = 0; i < w; ++i) part[i] += part[i + w];
    l[r] = l[r] * alpha[r] + part[0];
  }
}

// Software-pipelined: step t issues S(t) = Q·K(t)ᵀ and O += P(t-1)·V(t-1), and the softmax of
// S(t) runs while the tensor cores still work on P(t-1)·V(t-1). K runs one tile ahead of V:
// step t loads K(t+1) and V(t) behind a barrier that every warp reaches only after its reads of
// K(t-1) and V(t-2) are done. Both warpgroups run every tile of the block (the first one's last
// tile is masked out under a causal mask): products issued under a branch would be serialized.
// Blocks a multiprocessor holds at head size 64; at 128 the accumulators need more registers.
template <int kD>
constexpr int kFwdBlocks = kD == 64 ? 16 / kFwdWarps : 1;

template <class T, int kD, bool kDrop>
__global__ void __launch_bounds__(32 * kFwdWarps, kFwdBlocks<kD>) flash_fwd_kernel(AttnArgs a) {
  constexpr int kThreads = 32 * kFwdWarps;
  extern __shared__ __align__(16) unsigned char smem[];
  T* sQ = aligned_smem<T>(smem);
  T* sK = sQ + kFwdOwn * kD;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, tq = lane & 3;
  const int wg = warp / 4;
  const Head hd(a);
  const int q0 = query_tile_start<kFwdOwn>();
  const T* qkv = static_cast<const T*>(a.qkv);
  const int kv_end = a.causal ? min(q0 + kFwdOwn, hd.L) : hd.L;
  const int n_tiles = ceil_div(kv_end, kTile);
  const int row0 = q0 + warp * 16 + g;  // rows row0 and row0 + 8
  float o[kD / 8][4] = {};
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
  if (n_tiles > 0) {
    KvStream<T, kThreads, kD> kv{
        sK, sK + kStages * tile_elems(kD), qkv, hd, n_tiles, head_cols<kD>(a)};
    // Waits for the loads committed so far; then issues K(t+1) and V(t).
    auto next_loads = [&](int t) {
      cp_async_wait_all();
      fence_async_smem();
      __syncthreads();
      kv.load_k(t + 1);
      kv.load_v(t);
      cp_async_commit();
    };
    const T* wg_q = tile_row(sQ, wg * kWgRows);
    auto need_mask = [&](int j0) {
      return j0 + kTile > hd.L || (a.causal && j0 + kTile - 1 > q0 + warp * 16);
    };
    load_tile<kFwdOwn, kThreads, kD>(sQ, qkv + hd.qkv(q0, 0), hd.rs, hd.S - q0, head_cols<kD>(a));
    kv.load_k(0);
    cp_async_commit();
    next_loads(0);
    float s[8][4], alpha[2];
    uint32_t pa[4][4];  // P(t-1), live until its product with V(t-1) is done
    wgmma_abt<T, 8, kFwdOwn, kTile, kD>(s, wg_q, kv.k_tile(0));
    wg_commit();
    wg_wait<0>();
    fence_regs(s);
    softmax_tile<T, kDrop>(s, pa, alpha, m, l, a, hd, row0, 0, need_mask(0), tq);
    for (int t = 1; t < n_tiles; ++t) {
      next_loads(t);
      wgmma_abt<T, 8, kFwdOwn, kTile, kD>(s, wg_q, kv.k_tile(t));
      wg_commit();
      wgmma_pb<T, 4, kTile, kD>(o, pa, kv.v_tile(t - 1));
      wg_commit();
      wg_wait<1>();
      fence_regs(s);
      uint32_t pn[4][4];
      softmax_tile<T, kDrop>(s, pn, alpha, m, l, a, hd, row0, t * kTile, need_mask(t * kTile), tq);
      wg_wait<0>();
      fence_regs(o);
      fence_regs(pa);
#pragma unroll
      for (int dt = 0; dt < kD / 8; ++dt)
#pragma unroll
        for (int e = 0; e < 4; ++e) o[dt][e] *= alpha[e >> 1];
#pragma unroll
      for (int kk = 0; kk < 4; ++kk)
#pragma unroll
        for (int e = 0; e < 4; ++e) pa[kk][e] = pn[kk][e];
      fence_regs(pa);  // copied before the next products are issued
    }
    next_loads(n_tiles);  // V of the last tile
    wgmma_pb<T, 4, kTile, kD>(o, pa, kv.v_tile(n_tiles - 1));
    wg_commit();
    wg_wait<0>();
    fence_regs(o);
    fence_regs(pa);
  }
  T* out = static_cast<T*>(a.out);
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float sum = l[r];
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    sum += __shfl_xor_sync(0xffffffffu, sum, 2);
    const int i = row0 + r * 8;
    if (i >= hd.S) continue;
    const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
    T* orow = out + hd.out(i);
#pragma unroll
    for (int dt = 0; dt < kD / 8; ++dt)
      if (dt * 8 < head_cols<kD>(a))
        *reinterpret_cast<uint32_t*>(orow + dt * 8 + 2 * tq) =
            pack2<T>(o[dt][2 * r] * inv, o[dt][2 * r + 1] * inv);
    if (tq == 0) a.lse[hd.row(i)] = sum > 0.0f ? m[r] * kLn2 + logf(sum) : -INFINITY;
  }
}

constexpr int kDqWarps = 8;
constexpr int kDqOwn = 16 * kDqWarps;

template <int kD>
constexpr int kDqBlocks = kD == 64 ? 16 / kDqWarps : 1;

template <class T, int kD, bool kDrop>
__global__ void __launch_bounds__(32 * kDqWarps, kDqBlocks<kD>) flash_dq_kernel(AttnArgs a) {
  constexpr int kThreads = 32 * kDqWarps;
  extern __shared__ __align__(16) unsigned char smem[];
  T* sQ = aligned_smem<T>(smem);
  T* sdO = sQ + kDqOwn * kD;
  T* sK = sdO + kDqOwn * kD;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, tq = lane & 3;
  const int wg = warp / 4;
  const Head hd(a);
  const int q0 = query_tile_start<kDqOwn>();
  const T* qkv = static_cast<const T*>(a.qkv);
  const T* dout = static_cast<const T*>(a.d_out);
  const int kv_end = a.causal ? min(q0 + kDqOwn, hd.L) : hd.L;
  const int n_tiles = ceil_div(kv_end, kTile);
  load_tile<kDqOwn, kThreads, kD>(sQ, qkv + hd.qkv(q0, 0), hd.rs, hd.S - q0, head_cols<kD>(a));
  load_tile<kDqOwn, kThreads, kD>(sdO, dout + hd.out(q0), hd.os, hd.S - q0, head_cols<kD>(a));
  cp_async_commit();
  KvStream<T, kThreads, kD> kv{
      sK, sK + kStages * tile_elems(kD), qkv, hd, n_tiles, head_cols<kD>(a)};
  kv.prologue();

  const int row0 = q0 + warp * 16 + g;
  const float sl2 = a.scale * kLog2e;
  float lse2[2], dvec[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int i = row0 + r * 8;
    const float lse = i < hd.S ? a.lse[hd.row(i)] : -INFINITY;
    lse2[r] = lse == -INFINITY ? INFINITY : lse * kLog2e;
    dvec[r] = i < hd.S ? a.dvec[hd.row(i)] : 0.0f;
  }
  const T* wg_q = tile_row(sQ, wg * kWgRows);
  const T* wg_do = tile_row(sdO, wg * kWgRows);
  float dq[kD / 8][4] = {};
  uint32_t ds[kHalf / 16][4] = {};  // live until the dQ product reading it is done
  for (int t = 0; t < n_tiles; ++t) {
    kv.advance(t);
#pragma unroll
    for (int half = 0; half < kTile / kHalf; ++half) {
      const int j0 = t * kTile + half * kHalf;
      if (a.causal && j0 > q0 + wg * kWgRows + kWgRows - 1) break;  // keys after the group's rows
      const T* k_s = tile_row(kv.k_tile(t), half * kHalf);
      const T* v_s = tile_row(kv.v_tile(t), half * kHalf);
      float s[kHalf / 8][4], dp[kHalf / 8][4];
      wgmma_abt<T, kHalf / 8, kDqOwn, kTile, kD>(s, wg_q, k_s);
      wgmma_abt<T, kHalf / 8, kDqOwn, kTile, kD>(dp, wg_do, v_s);
      wg_commit();
      wg_wait<0>();  // also the previous half's dQ product, which read ds
      fence_regs(s);
      fence_regs(dp);
      fence_regs(ds);
      const bool need_mask = j0 + kHalf > hd.L || (a.causal && j0 + kHalf - 1 > q0 + warp * 16);
      with_mask(need_mask, [&](auto mask) {
#pragma unroll
        for (int nt = 0; nt < kHalf / 8; ++nt)
#pragma unroll
          for (int r = 0; r < 2; ++r) {
            const int i = row0 + r * 8, j = j0 + nt * 8 + 2 * tq;
            float f[2] = {1.0f, 1.0f}, v[2];
            if constexpr (kDrop) drop_pair(a.drop, hd.drop_index(i, j), f[0], f[1]);
#pragma unroll
            for (int c = 0; c < 2; ++c) {
              float p = exp2_ftz(s[nt][2 * r + c] * sl2 - lse2[r]);
              if (decltype(mask)::value && (j + c >= hd.L || (a.causal && j + c > i))) p = 0.0f;
              v[c] = p * (dp[nt][2 * r + c] * f[c] - dvec[r]);
            }
            ds[nt >> 1][pack_slot(nt, r)] = pack2<T>(v[0], v[1]);
          }
      });
      wgmma_pb<T, kHalf / 16, kTile, kD>(dq, ds, k_s);
      wg_commit();
    }
    wg_wait<0>();  // before the next barrier lets this buffer be refilled
    fence_regs(ds);
  }
  fence_regs(dq);
  cp_async_wait_all();
  T* dst = static_cast<T*>(a.d_qkv);
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int i = row0 + r * 8;
    if (i >= hd.S) continue;
    if (a.rope_half) unrotate_row(dq, r, a.rope_cos, a.rope_sin, a.rope_half, i);
    T* row = dst + hd.qkv(i, 0);
#pragma unroll
    for (int dt = 0; dt < kD / 8; ++dt)
      if (dt * 8 < head_cols<kD>(a))
        *reinterpret_cast<uint32_t*>(row + dt * 8 + 2 * tq) =
            pack2<T>(dq[dt][2 * r] * a.scale, dq[dt][2 * r + 1] * a.scale);
  }
}

// One warpgroup (64 keys) a block, about 160 registers at head size 64: three blocks per
// multiprocessor. Four (128 registers, with spills) measured slower on the H200. At 128 the
// dK and dV accumulators alone take 128 registers: two blocks.
constexpr int kDkvWarps = 4;
constexpr int kDkvOwn = 16 * kDkvWarps;
static_assert(kDkvOwn == kSwRow, "dS tiles of the atomic dQ are one panel wide");
template <int kD>
constexpr int kDkvBlocks = kD == 64 ? 3 : 2;

// kAtomicDq: dQ of the half tile's 32 queries from the block's 64 keys. dS, transposed through
// shared memory, is split so that warp w forms rows (w % 2) * 16 and head columns
// (w / 2) * kD / 2 of dQ += dS·K and adds them to a.dq_accum with float2 atomics.
template <class T, int kD>
__device__ __forceinline__ void add_dq_partial(const AttnArgs& a, const Head& hd, const T* ds_s,
                                               const T* k_s, int i0, int warp, int lane) {
  constexpr int kCols = kD / 2;
  const int mt = warp & 1, dh = warp >> 1, g = lane >> 2, tq = lane & 3;
  float acc[kCols / 8][4] = {};
#pragma unroll
  for (int kk = 0; kk < kDkvOwn / 16; ++kk) {
    uint32_t af[4];
    ldsm_x4(af, sw_at(ds_s, mt * 16 + (lane & 15), kk * 16 + (lane >> 4) * 8));
#pragma unroll
    for (int dp = 0; dp < kCols / 16; ++dp) {
      uint32_t b[4];
      ldsm_x4_t(b, tile_at<kDkvOwn, kD>(k_s, kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8,
                                        dh * kCols + dp * 16 + (lane >> 4) * 8));
      mma<T>(acc[2 * dp], af, b[0], b[1]);
      mma<T>(acc[2 * dp + 1], af, b[2], b[3]);
    }
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int i = i0 + mt * 16 + g + r * 8;
    if (i >= hd.S) continue;
    float* row = a.dq_accum + hd.row(i) * head_cols<kD>(a) + dh * kCols + 2 * tq;
#pragma unroll
    for (int nt = 0; nt < kCols / 8; ++nt)
      if (dh * kCols + nt * 8 < head_cols<kD>(a))
        atomicAdd(reinterpret_cast<float2*>(row + nt * 8),
                  make_float2(acc[nt][2 * r], acc[nt][2 * r + 1]));
  }
}

template <class T, int kD, bool kDrop, bool kAtomicDq>
__global__ void __launch_bounds__(32 * kDkvWarps, kDkvBlocks<kD>) flash_dkv_kernel(AttnArgs a) {
  constexpr int kThreads = 32 * kDkvWarps, kOwn = kDkvOwn;
  extern __shared__ __align__(16) unsigned char smem[];
  T* sK = aligned_smem<T>(smem);
  T* sV = sK + kOwn * kD;
  T* sQ = sV + kOwn * kD;                                            // two buffers
  T* sdO = sQ + 2 * tile_elems(kD);                                  // two buffers
  float* sLse = reinterpret_cast<float*>(sdO + 2 * tile_elems(kD));  // [2][kTile]
  float* sDv = sLse + 2 * kTile;                                     // [2][kTile]
  T* sdS = reinterpret_cast<T*>(sDv + 2 * kTile);  // kAtomicDq: [2 halves][kHalf rows][kOwn]
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, tq = lane & 3;
  const KvBlock blk(a, kOwn);
  const Head& kvh = blk.kv;
  const int j0 = blk.j0;
  const T* qkv = static_cast<const T*>(a.qkv);
  const T* dout = static_cast<const T*>(a.d_out);
  const int key0 = j0 + warp * 16 + g;  // key rows key0 and key0 + 8

  const int q_first = a.causal ? j0 / kTile : 0;
  const int q_tiles = j0 < kvh.L ? ceil_div(kvh.S, kTile) : q_first;
  // Step `it` takes query tile q_first + it % per_head of the block's query head it / per_head.
  const int per_head = q_tiles - q_first, steps = blk.count * per_head;
  // Stages step it: Q, dO and the rows' lse and dvec, all asynchronously. Rows past the
  // sequence get lse -inf and dvec 0; the mask zeroes their probabilities.
  auto stage = [&](int it, int buf) {
    const Head hd = kvh.with_query(blk.first + it / per_head);
    const int i0 = (q_first + it % per_head) * kTile;
    load_tile<kTile, kThreads, kD>(sQ + buf * tile_elems(kD), qkv + hd.qkv(i0, 0), hd.rs, hd.S - i0,
                                   head_cols<kD>(a));
    load_tile<kTile, kThreads, kD>(sdO + buf * tile_elems(kD), dout + hd.out(i0), hd.os, hd.S - i0,
                                   head_cols<kD>(a));
    static_assert(2 * kTile == kThreads, "one lse or dvec entry per thread");
    const int r = threadIdx.x % kTile, i = i0 + r;
    const bool is_lse = threadIdx.x < kTile;
    float* d = (is_lse ? sLse : sDv) + buf * kTile + r;
    if (i < hd.S)
      cp_async4(d, (is_lse ? a.lse : a.dvec) + hd.row(i));
    else
      *d = is_lse ? -INFINITY : 0.0f;
  };
  load_tile<kOwn, kThreads, kD>(sK, qkv + kvh.qkv(j0, 1), kvh.rs, kvh.S - j0, head_cols<kD>(a));
  load_tile<kOwn, kThreads, kD>(sV, qkv + kvh.qkv(j0, 2), kvh.rs, kvh.S - j0, head_cols<kD>(a));
  if (steps > 0) stage(0, 0);
  cp_async_commit();

  const float sl2 = a.scale * kLog2e;
  float dk[kD / 8][4] = {}, dv[kD / 8][4] = {};
  uint32_t pa[kHalf / 16][4] = {}, da[kHalf / 16][4] = {};  // live until their products are done
  for (int it = 0; it < steps; ++it) {
    const int buf = it & 1, qt = q_first + it % per_head;
    const Head hd = kvh.with_query(blk.first + it / per_head);
    cp_async_wait_all();
    fence_async_smem();
    __syncthreads();
    if (it + 1 < steps) stage(it + 1, buf ^ 1);
    cp_async_commit();
#pragma unroll
    for (int half = 0; half < kTile / kHalf; ++half) {
      const int i0 = qt * kTile + half * kHalf;
      if (a.causal && i0 + kHalf - 1 < j0) continue;  // every query before the block's keys
      // Every query before this warp's keys: a zero P and dS block.
      const bool warp_masked = a.causal && i0 + kHalf - 1 < j0 + warp * 16;
      const T* q_s = tile_row(sQ + buf * tile_elems(kD), half * kHalf);
      const T* do_s = tile_row(sdO + buf * tile_elems(kD), half * kHalf);
      const float* lse = sLse + buf * kTile + half * kHalf;
      const float* dvec = sDv + buf * kTile + half * kHalf;
      float st[kHalf / 8][4], dpt[kHalf / 8][4];
      wgmma_abt<T, kHalf / 8, kOwn, kTile, kD>(st, sK, q_s);
      wgmma_abt<T, kHalf / 8, kOwn, kTile, kD>(dpt, sV, do_s);
      wg_commit();
      wg_wait<0>();  // also the previous half's dK/dV products, which read pa and da
      fence_regs(st);
      fence_regs(dpt);
      fence_regs(pa);
      fence_regs(da);
      if (warp_masked) {
#pragma unroll
        for (int kt = 0; kt < kHalf / 16; ++kt)
#pragma unroll
          for (int e = 0; e < 4; ++e) pa[kt][e] = da[kt][e] = 0;
      } else {
        const bool need_mask =
            i0 + kHalf > hd.S || j0 + kOwn > hd.L || (a.causal && i0 < j0 + warp * 16 + 16);
        with_mask(need_mask, [&](auto mask) {
#pragma unroll
          for (int nt = 0; nt < kHalf / 8; ++nt) {
            const int col0 = nt * 8 + 2 * tq;
            const float2 lse2 = *reinterpret_cast<const float2*>(lse + col0);
            const float2 dv2 = *reinterpret_cast<const float2*>(dvec + col0);
            const float row_lse[2] = {lse2.x * kLog2e, lse2.y * kLog2e}, row_dv[2] = {dv2.x, dv2.y};
#pragma unroll
            for (int r = 0; r < 2; ++r) {
              const int j = key0 + r * 8;
              float pv[2], dsv[2];
#pragma unroll
              for (int c = 0; c < 2; ++c) {
                const int i = i0 + col0 + c;
                // Masked (and past-the-end, lse -inf) entries are assigned 0, never multiplied.
                float p = exp2_ftz(st[nt][2 * r + c] * sl2 - row_lse[c]);
                if (decltype(mask)::value && (i >= hd.S || j >= hd.L || (a.causal && j > i)))
                  p = 0.0f;
                float f = 1.0f;
                if constexpr (kDrop)
                  f = dropout_factor(a.drop.seed, hd.drop_index(i, j), a.drop.p, a.drop.scale);
                pv[c] = p * f;
                dsv[c] = p * (dpt[nt][2 * r + c] * f - row_dv[c]);
              }
              pa[nt >> 1][pack_slot(nt, r)] = pack2<T>(pv[0], pv[1]);
              da[nt >> 1][pack_slot(nt, r)] = pack2<T>(dsv[0], dsv[1]);
            }
          }
        });
      }
      if constexpr (kAtomicDq) {
        // dSᵀ fragment (keys × queries) → dS rows (queries) × this warp's 16 key columns.
        T* ds_s = sdS + half * kHalf * kOwn;
#pragma unroll
        for (int kt = 0; kt < kHalf / 16; ++kt) {
          const int m = lane >> 3;
          stsm_x4_t(sw_at(ds_s, kt * 16 + (m >> 1) * 8 + (lane & 7), warp * 16 + (m & 1) * 8),
                    da[kt]);
        }
      }
      wgmma_pb<T, kHalf / 16, kTile, kD>(dv, pa, do_s);
      wgmma_pb<T, kHalf / 16, kTile, kD>(dk, da, q_s);
      wg_commit();
      if constexpr (kAtomicDq) {
        // Each half has its own dS buffer; the next writer of this one runs after the next
        // tile's barrier, which every warp reaches only once its reads here are done.
        __syncthreads();
        add_dq_partial<T, kD>(a, hd, sdS + half * kHalf * kOwn, sK, i0, warp, lane);
      }
    }
    wg_wait<0>();  // before the next barrier lets these buffers be refilled
    fence_regs(pa);
    fence_regs(da);
  }
  fence_regs(dk);
  fence_regs(dv);
  cp_async_wait_all();
  // Row r of the accumulator acc (part 1 dK, 2 dV) times f: into d_qkv, or this split's partial.
  auto store = [&](const float(&acc)[kD / 8][4], int r, int part, float f) {
    const int j = key0 + r * 8;
    if (j >= kvh.S) return;
    T* row = static_cast<T*>(a.d_qkv) + kvh.qkv(j, part);
    float* prow = a.dkv_partials ? blk.partial(a, j, part) : nullptr;
#pragma unroll
    for (int dt = 0; dt < kD / 8; ++dt) {
      if (dt * 8 >= head_cols<kD>(a)) continue;
      const float x = acc[dt][2 * r] * f, y = acc[dt][2 * r + 1] * f;
      if (prow)
        *reinterpret_cast<float2*>(prow + dt * 8 + 2 * tq) = make_float2(x, y);
      else
        *reinterpret_cast<uint32_t*>(row + dt * 8 + 2 * tq) = pack2<T>(x, y);
    }
  };
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    // Rows past the sequence are not stored, and have no angles in the tables.
    if (a.rope_half && key0 + r * 8 < kvh.S)
      unrotate_row(dk, r, a.rope_cos, a.rope_sin, a.rope_half, key0 + r * 8);
    store(dk, r, 1, a.scale);
    store(dv, r, 2, 1.0f);
  }
}

// Row (b, i, h) of out / d_out (token-major) as row (b, h, i) of lse, dvec and dq_accum.
__device__ __forceinline__ int64_t head_major_row(const AttnArgs& a, int64_t row) {
  const int64_t h = row % a.heads, bi = row / a.heads;
  return (bi / a.seq * a.heads + h) * a.seq + bi % a.seq;
}

// dvec[b, h, i] = dO_i · O_i, the row term of the softmax backward: kD / 8 threads per row (those
// past the head size idle), one 16-byte load of each operand per thread. With a dq_accum the
// row's accumulator is zeroed too.
template <class T, int kD>
__global__ void flash_dvec_kernel(AttnArgs a) {
  constexpr int kParts = kD / 8;
  const int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  const int64_t row = t / kParts, col = (t % kParts) * 8;  // row (b, i, h) of out and d_out
  const bool valid = row < a.batch * a.seq * a.heads;
  const int64_t head_row = head_major_row(a, row);
  float sum = 0.0f;
  if (valid && col < a.head_dim) {
    const int64_t off = row * a.head_dim + col;
    const int4 ov = *reinterpret_cast<const int4*>(static_cast<const T*>(a.out) + off);
    const int4 dv = *reinterpret_cast<const int4*>(static_cast<const T*>(a.d_out) + off);
    const T* o = reinterpret_cast<const T*>(&ov);
    const T* d = reinterpret_cast<const T*>(&dv);
#pragma unroll
    for (int k = 0; k < 8; ++k) sum += to_f<T>(o[k]) * to_f<T>(d[k]);
    if (a.dq_accum) {
      float4* acc = reinterpret_cast<float4*>(a.dq_accum + head_row * a.head_dim + col);
      acc[0] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      acc[1] = acc[0];
    }
  }
#pragma unroll
  for (int m = 1; m < kParts; m *= 2) sum += __shfl_xor_sync(0xffffffffu, sum, m);
  if (valid && t % kParts == 0) a.dvec[head_row] = sum;
}

// Eight floats from a 16-byte aligned address.
__device__ __forceinline__ void load_eight(const float* p, float (&v)[8]) {
  const float4 lo = reinterpret_cast<const float4*>(p)[0],
               hi = reinterpret_cast<const float4*>(p)[1];
  v[0] = lo.x;
  v[1] = lo.y;
  v[2] = lo.z;
  v[3] = lo.w;
  v[4] = hi.x;
  v[5] = hi.y;
  v[6] = hi.z;
  v[7] = hi.w;
}

// dQ = scale · dq_accum, written into the query part of d_qkv: kD / 8 threads per row
// (b, i, h), 8 columns each. Under rotary positions the thread of columns c < rope_half also
// writes their partners c + rope_half, turned back; those partners' own threads idle.
template <class T, int kD>
__global__ void flash_dq_store_kernel(AttnArgs a) {
  constexpr int kParts = kD / 8;
  const int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  const int64_t row = t / kParts, col = (t % kParts) * 8, D = a.head_dim, half = a.rope_half;
  if (row >= a.batch * a.seq * a.heads || col >= D) return;
  const bool rotated = col < 2 * half, first = col < half;
  if (rotated && !first) return;
  const int64_t h = row % a.heads, bi = row / a.heads;
  const float* acc = a.dq_accum + head_major_row(a, row) * D + col;
  T* dst = static_cast<T*>(a.d_qkv) + bi * a.qkv_stride() + h * D + col;
  float x[8], y[8];
  load_eight(acc, x);
  if (rotated) {
    load_eight(acc + half, y);
    const int64_t at = bi % a.seq * half + col;
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const float co = __ldg(a.rope_cos + at + k), si = __ldg(a.rope_sin + at + k);
      const float x1 = x[k], x2 = y[k];
      x[k] = x1 * co + x2 * si;
      y[k] = x2 * co - x1 * si;
    }
  }
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    x[k] *= a.scale;
    y[k] *= a.scale;
  }
  store_floats<T, 8>(dst, x);
  if (rotated) store_floats<T, 8>(dst + half, y);
}

// Dynamic shared memory of each kernel at head-size instance d: 16-bit tiles, fp32 lse and dvec
// rows.
constexpr size_t kElemBytes = 2;
constexpr size_t fwd_smem(int d) {
  return kElemBytes * (kFwdOwn * d + 2 * kStages * tile_elems(d)) + kSmemAlign;
}
constexpr size_t dq_smem(int d) {
  return kElemBytes * (2 * kDqOwn * d + 2 * kStages * tile_elems(d)) + kSmemAlign;
}
constexpr size_t dkv_smem(int d, bool atomic_dq) {
  return kElemBytes *
             (2 * kDkvOwn * d + 4 * tile_elems(d) + (atomic_dq ? 2 * kHalf * kDkvOwn : 0)) +
         4 * kTile * sizeof(float) + kSmemAlign;
}

template <class Kernel>
void configure(Kernel kernel, size_t smem) {
  cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
  // Registers, not shared memory, should bound the blocks a multiprocessor holds.
  cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                       cudaSharedmemCarveoutMaxShared);
}

// A block per 16 * warps query rows of each (batch, query head).
template <class Kernel>
void launch(const Launch& l, Kernel kernel, const AttnArgs& a, int warps, size_t smem) {
  configure(kernel, smem);
  const int64_t own = 16 * warps;
  const dim3 grid(static_cast<unsigned>(ceil_div(a.seq, own)), static_cast<unsigned>(a.heads),
                  static_cast<unsigned>(a.batch));
  kernel<<<grid, 32 * warps, smem, l.stream>>>(a);
}

// The dK/dV kernel (KvBlock): a block per kDkvOwn keys of each (batch, K/V head, split).
template <class Kernel>
void launch_dkv(const Launch& l, Kernel kernel, const AttnArgs& a, size_t smem) {
  configure(kernel, smem);
  const int64_t blocks = ceil_div(a.seq, kDkvOwn) * a.batch * a.kv() * a.dkv_splits;
  kernel<<<static_cast<unsigned>(blocks), 32 * kDkvWarps, smem, l.stream>>>(a);
}

// Blocks of a dK/dV kernel instance a multiprocessor holds (asked once).
template <class T, int kD, bool kDrop, bool kAtomicDq>
int dkv_resident() {
  static const int n = [] {
    const auto kernel = flash_dkv_kernel<T, kD, kDrop, kAtomicDq>;
    const size_t smem = dkv_smem(kD, kAtomicDq);
    configure(kernel, smem);
    int r = 0;  // a failed query (0) counts as one block
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&r, kernel, 32 * kDkvWarps, smem);
    return r;
  }();
  return n;
}

template <class T, int kD, bool kDrop>
void backward_typed(const Launch& l, const AttnArgs& a) {
  const int64_t threads = a.batch * a.seq * a.heads * (kD / 8);
  const unsigned blocks = static_cast<unsigned>(ceil_div(threads, kBlockThreads));
  flash_dvec_kernel<T, kD><<<blocks, kBlockThreads, 0, l.stream>>>(a);
  if (a.dq_accum) {
    launch_dkv(l, flash_dkv_kernel<T, kD, kDrop, true>, a, dkv_smem(kD, true));
    flash_dq_store_kernel<T, kD><<<blocks, kBlockThreads, 0, l.stream>>>(a);
  } else {
    launch(l, flash_dq_kernel<T, kD, kDrop>, a, kDqWarps, dq_smem(kD));
    launch_dkv(l, flash_dkv_kernel<T, kD, kDrop, false>, a, dkv_smem(kD, false));
  }
}

// Calls body(T{}, tile width, dropout) for the arguments' element type (bf16 or f16), the kernels'
// head-size instance (64 or 128, as std::integral_constant) and whether dropout is on
// (std::bool_constant).
template <class Body>
void dispatch(const AttnArgs& a, Body&& body) {
  auto with_drop = [&](auto type, auto size) {
    if (a.drop.active())
      body(type, size, std::true_type{});
    else
      body(type, size, std::false_type{});
  };
  auto with_size = [&](auto type) {
    if (a.head_dim == 64)
      with_drop(type, std::integral_constant<int, 64>{});
    else
      with_drop(type, std::integral_constant<int, 128>{});
  };
  if (a.dt == DType::BF16)
    with_size(bf16{});
  else
    with_size(f16{});
}

}  // namespace

// Whether these kernels were built for Hopper's wgmma (CMAKE_CUDA_ARCHITECTURES 90a) and the
// current device is a Hopper GPU that runs them.
bool wgmma_available() {
#ifdef HWT_CUDA_SM90A
  static const bool available = [] {
    int dev = 0, major = 0, minor = 0;
    return cudaGetDevice(&dev) == cudaSuccess &&
           cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess &&
           cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) == cudaSuccess &&
           major == 9 && minor == 0;
  }();
  return available;
#else
  return false;
#endif
}

bool flash_supported(const AttnArgs& a) {
  if (a.dt != DType::BF16 && a.dt != DType::F16) return false;
  if (a.head_dim != 64 && (a.head_dim < 64 || a.head_dim > 128 || a.head_dim % 8 != 0))
    return false;
  if (!wgmma_available()) return false;
  if (a.seq > (int64_t{1} << 30)) return false;  // positions are 32-bit in the kernels
  for (const void* p :
       {a.qkv, static_cast<const void*>(a.out), a.d_out, static_cast<const void*>(a.d_qkv)})
    if (p && !aligned16(p)) return false;
  return true;
}

void flash_forward(const Launch& l, const AttnArgs& a) {
  dispatch(a, [&](auto type, auto size, auto drop) {
    constexpr int kD = decltype(size)::value;
    launch(l, flash_fwd_kernel<decltype(type), kD, decltype(drop)::value>, a, kFwdWarps,
           fwd_smem(kD));
  });
}

int64_t flash_dkv_splits(const Launch& l, const AttnArgs& a, bool atomic_dq) {
  int64_t splits = 1;
  dispatch(a, [&](auto type, auto size, auto drop) {
    using T = decltype(type);
    constexpr int kD = decltype(size)::value;
    constexpr bool kDrop = decltype(drop)::value;
    const int n =
        atomic_dq ? dkv_resident<T, kD, kDrop, true>() : dkv_resident<T, kD, kDrop, false>();
    splits = dkv_split_count(l, ceil_div(a.seq, kDkvOwn) * a.batch * a.kv(), a.group(), n);
  });
  return splits;
}

void flash_backward(const Launch& l, const AttnArgs& a) {
  dispatch(a, [&](auto type, auto size, auto drop) {
    backward_typed<decltype(type), decltype(size)::value, decltype(drop)::value>(l, a);
  });
}

}  // namespace hwt::cuda
