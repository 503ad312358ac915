// Warp-level tensor-core primitives shared by the attention kernels (cuda_flash.cu on Hopper's
// warpgroup products, cuda_flash_mma.cu on mma.sync): ldmatrix, mma.sync, cp.async, packing of
// fp32 pairs into 16-bit operands, dropout multipliers, and the geometry of one (batch, head).
// Fragments follow mma.sync's layouts: with g = lane / 4 and t = lane % 4, a C fragment c[4]
// of a 16 x 8 tile holds (row g, columns 2t, 2t + 1) and (row g + 8, same columns).
#pragma once

#include <cstdint>
#include <type_traits>

#include "backend/cuda/cuda_common.cuh"
#include "backend/cuda/cuda_kernels.h"

namespace hwt::cuda {

// The backward of rotary positions on row r (0: g, 1: g + 8) of a 16-row accumulator whose
// column n * 8 + 2t + c is acc[n][2r + c]: columns c and c + half (c < half) turn by minus the
// angles of position pos, cos/sin [pos * half + c]. half is a multiple of 8, so a pair's two
// columns sit in one thread; each half the instance can hold gets its own unrolled loop, which
// keeps the registers' indices constants (indexed at run time, the array would go to local
// memory).
template <int kN>
__device__ __forceinline__ void unrotate_row(float (&acc)[kN][4], int r, const float* cos,
                                             const float* sin, int half, int64_t pos) {
  const int t = threadIdx.x & 3;
  cos += pos * half;
  sin += pos * half;
#pragma unroll
  for (int h8 = 1; h8 <= kN / 2; ++h8) {
    if (h8 * 8 != half) continue;
#pragma unroll
    for (int n = 0; n < h8; ++n)
#pragma unroll
      for (int c = 0; c < 2; ++c) {
        const int col = n * 8 + 2 * t + c;
        const float co = __ldg(cos + col), si = __ldg(sin + col);
        const float x1 = acc[n][2 * r + c], x2 = acc[n + h8][2 * r + c];
        acc[n][2 * r + c] = x1 * co + x2 * si;
        acc[n + h8][2 * r + c] = x2 * co - x1 * si;
      }
  }
}

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

// Copies 16 bytes, or (src_bytes 0) writes 16 zero bytes without reading src.
__device__ __forceinline__ void cp_async16(void* dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src),
               "r"(src_bytes));
}
__device__ __forceinline__ void cp_async4(void* dst, const void* src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(smem_addr(dst)), "l"(src));
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::);
}
template <int kPending>  // waits until at most kPending committed groups are still in flight
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}
__device__ __forceinline__ void cp_async_wait_all() {
  cp_async_wait<0>();
}

// Slot of the packed A fragment that holds C-fragment element pair (nt, r) of a 16-row product:
// packed[nt / 2][(nt % 2) * 2 + r] = (c[nt][2r], c[nt][2r + 1]).
__device__ __forceinline__ constexpr int pack_slot(int nt, int r) {
  return (nt & 1) * 2 + r;
}

// Runs body(std::true_type) when need_mask, else body(std::false_type): the masked and unmasked
// element loops compile separately, so unmasked tiles (most of them) issue no mask arithmetic
// (as one loop the compiler predicates the mask tests and still issues them everywhere).
template <class Body>
__device__ __forceinline__ void with_mask(bool need_mask, Body&& body) {
  if (need_mask)
    body(std::true_type{});
  else
    body(std::false_type{});
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

// One (batch, head) of an attention call: query head h, which reads K/V head kh = h / group; or,
// in a dK/dV kernel (KvBlock), the K/V head kh, whose group's query heads the kernel visits with
// with_query.
struct Head {
  int S, L, D;                      // sequence length, valid keys, head size
  int64_t H, KV, b, h, kh, rs, os;  // rs, os: row strides of qkv and of out / d_out
  // The query head of this block (blockIdx.y; batch blockIdx.z) and its K/V head.
  __device__ explicit Head(const AttnArgs& a)
      : Head(a, blockIdx.z, blockIdx.y, blockIdx.y / a.group()) {}
  // K/V head kh_ of batch b_, seen by the first query head of its group.
  __device__ Head(const AttnArgs& a, int64_t b_, int64_t kh_) : Head(a, b_, kh_ * a.group(), kh_) {}
  __device__ Head(const AttnArgs& a, int64_t b_, int64_t h_, int64_t kh_)
      : S(static_cast<int>(a.seq)),
        D(static_cast<int>(a.head_dim)),
        H(a.heads),
        KV(a.kv()),
        b(b_),
        h(h_),
        kh(kh_),
        rs(a.qkv_stride()),
        os(a.heads * a.head_dim) {
    const int64_t len = a.key_lengths ? a.key_lengths[b] : a.seq;
    L = static_cast<int>(len < 0 ? 0 : (len > a.seq ? a.seq : len));
  }
  // The same K/V head as seen by query head q of its group (q from 0).
  __device__ Head with_query(int64_t q) const {
    Head r = *this;
    r.h = kh * (H / KV) + q;
    return r;
  }
  // Token t's part (0 q, 1 k, 2 v) of this head: q from the query heads, k and v from the
  // K/V heads after them.
  __device__ int64_t qkv(int64_t t, int part) const {
    return (b * S + t) * rs + (part == 0 ? h : H + (part - 1) * KV + kh) * D;
  }
  __device__ int64_t out(int64_t t) const { return (b * S + t) * os + h * D; }
  __device__ int64_t row(int64_t i) const { return (b * H + h) * S + i; }
  // Dropout element index of (query i, key j), as the CPU backend numbers it.
  __device__ uint64_t drop_index(int i, int j) const {
    return static_cast<uint64_t>(row(i) * S + j);
  }
};

// The work of dK/dV block blockIdx.x (a one-dimensional grid): `rows` keys from j0 of one K/V
// head, summed over `count` query heads of its group from `first`, split part `split` of
// a.dkv_splits. Key blocks vary slowest, so that under a causal mask the longest blocks (the
// first keys, which every query sees) of all heads are scheduled first.
struct KvBlock {
  int j0, first, count;
  int64_t split;
  Head kv;
  __device__ KvBlock(const AttnArgs& a, int rows)
      : KvBlock(a, rows, a.batch * a.kv() * a.dkv_splits) {}
  // The fp32 partial row of key j, part 1 (dK) or 2 (dV).
  __device__ float* partial(const AttnArgs& a, int64_t j, int part) const {
    return a.dkv_partials +
           (((split * a.batch + kv.b) * kv.S + j) * 2 * kv.KV + (part - 1) * kv.KV + kv.kh) * kv.D;
  }

 private:
  __device__ KvBlock(const AttnArgs& a, int rows, int64_t per_key_block)
      : j0(static_cast<int>(blockIdx.x / per_key_block) * rows),
        first(static_cast<int>(blockIdx.x % a.dkv_splits * (a.group() / a.dkv_splits))),
        count(static_cast<int>(a.group() / a.dkv_splits)),
        split(blockIdx.x % a.dkv_splits),
        kv(a, blockIdx.x % per_key_block / (a.dkv_splits * a.kv()),
           blockIdx.x % per_key_block / a.dkv_splits % a.kv()) {}
};

// The query (or key) tile of this block: later (longer, under a causal mask) query tiles are
// scheduled first.
template <int kOwn>
__device__ __forceinline__ int query_tile_start() {
  return static_cast<int>(gridDim.x - 1 - blockIdx.x) * kOwn;
}

}  // namespace hwt::cuda
