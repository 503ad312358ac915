// Hopper warpgroup matrix products (wgmma, sm_90a) for 16-bit operands with f32 accumulators,
// and the shared-memory layout they read: tiles of 64-element (128-byte) rows stored with the
// 128-byte swizzle, 16-byte chunk c of row r at chunk c ^ (r % 8), so that 8-row groups are
// 1024 bytes apart and ldmatrix/stmatrix on the same tiles are free of bank conflicts.
// Accumulators follow mma.sync's C layout: warp w of the warpgroup holds rows 16w..16w+15,
// d[n][0..1] = (row g, columns 8n + 2t, +1), d[n][2..3] = (row g + 8, same columns), where
// g = lane / 4 and t = lane % 4. A operands from registers follow mma.sync's A layout.
#pragma once

#include <cstdint>
#include <type_traits>

#include "backend/cuda/cuda_mma.cuh"

namespace hwt::cuda {

// The instructions exist only in sm_90a code; other targets compile the callers (never launched
// there: flash_supported) with a trap instead.
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define HWT_WGMMA_ASM(...) __trap()
#else
#define HWT_WGMMA_ASM(...) asm volatile(__VA_ARGS__)
#endif

constexpr int kSwRow = 64;  // elements of a swizzled row

// Element (row, col) of a swizzled tile; col multiple of 8 gives a 16-byte chunk's start.
template <class T>
__device__ __forceinline__ T* sw_at(T* tile, int row, int col) {
  return tile + row * kSwRow + (((col >> 3) ^ (row & 7)) << 3) + (col & 7);
}

// Descriptor of a swizzled tile starting at p (1024-byte aligned for row 0 of a swizzle group;
// a k-step inside the row adds its byte offset / 16). The stride field is the 1024 bytes
// between 8-row groups; the leading field, unused for K-major operands and for MN-major ones
// no wider than 64 elements, holds the same.
__device__ __forceinline__ uint64_t sw128_desc(const void* p) {
  constexpr uint64_t kGroup = 1024 >> 4;
  return ((smem_addr(p) & 0x3FFFF) >> 4) | (kGroup << 16) | (kGroup << 32) | (uint64_t{1} << 62);
}
// The descriptor advanced by `bytes` (a multiple of 16) along the tile.
__device__ __forceinline__ uint64_t desc_plus(uint64_t desc, int bytes) {
  return desc + static_cast<uint64_t>(bytes >> 4);
}

// Orders this thread's ordinary shared-memory writes (stores, cp.async once waited for) before
// later reads by the tensor cores; a barrier must follow for other threads' wgmma.
__device__ __forceinline__ void fence_async_smem() {
  HWT_WGMMA_ASM("fence.proxy.async.shared::cta;\n" ::: "memory");
}
__device__ __forceinline__ void wg_fence() {
  HWT_WGMMA_ASM("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wg_commit() {
  HWT_WGMMA_ASM("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int kPending>
__device__ __forceinline__ void wg_wait() {
  HWT_WGMMA_ASM("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}
// Register fences, placed after a wait: accumulators are not read before the products that
// write them are done, and A operands in registers stay live (not reused for other values)
// until the products that read them are.
template <int kN>
__device__ __forceinline__ void fence_regs(float (&d)[kN][4]) {
#pragma unroll
  for (int n = 0; n < kN; ++n)
#pragma unroll
    for (int e = 0; e < 4; ++e) asm volatile("" : "+f"(d[n][e])::"memory");
}
template <int kN>
__device__ __forceinline__ void fence_regs(uint32_t (&a)[kN][4]) {
#pragma unroll
  for (int n = 0; n < kN; ++n)
#pragma unroll
    for (int e = 0; e < 4; ++e) asm volatile("" : "+r"(a[n][e])::"memory");
}

#define HWT_ACC4(d, n) "+f"(d[n][0]), "+f"(d[n][1]), "+f"(d[n][2]), "+f"(d[n][3])
#define HWT_ACC16(d) HWT_ACC4(d, 0), HWT_ACC4(d, 1), HWT_ACC4(d, 2), HWT_ACC4(d, 3)
#define HWT_ACC32(d) HWT_ACC16(d), HWT_ACC4(d, 4), HWT_ACC4(d, 5), HWT_ACC4(d, 6), HWT_ACC4(d, 7)
#define HWT_REGS16 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}"
#define HWT_REGS32                                                                              \
  "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24," \
  "%25,%26,%27,%28,%29,%30,%31}"

// d[4][4] = A (64 x 16, K-major tile) · B (32 x 16, K-major tile)ᵀ, plus d when accumulate
// (else d's old contents are ignored: no zeroing writes that could land between fence and
// product).
#define HWT_WGMMA_SS_N32(TY)                                                 \
  HWT_WGMMA_ASM(                                                             \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"                           \
      "wgmma.mma_async.sync.aligned.m64n32k16.f32." TY "." TY " " HWT_REGS16 \
      ", %16, %17, p, 1, 1, 0, 0;\n}\n"                                      \
      : HWT_ACC16(d)                                                         \
      : "l"(a), "l"(b), "r"(accumulate)                                      \
      : "memory")
template <class T>
__device__ __forceinline__ void wgmma_ss_n32(float (&d)[4][4], uint64_t a, uint64_t b,
                                             int accumulate) {
  if constexpr (std::is_same_v<T, bf16>)
    HWT_WGMMA_SS_N32("bf16");
  else
    HWT_WGMMA_SS_N32("f16");
}

// d[8][4] = A (64 x 16, K-major tile) · B (64 x 16, K-major tile)ᵀ, plus d when accumulate.
#define HWT_WGMMA_SS_N64(TY)                                                 \
  HWT_WGMMA_ASM(                                                             \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"                           \
      "wgmma.mma_async.sync.aligned.m64n64k16.f32." TY "." TY " " HWT_REGS32 \
      ", %32, %33, p, 1, 1, 0, 0;\n}\n"                                      \
      : HWT_ACC32(d)                                                         \
      : "l"(a), "l"(b), "r"(accumulate)                                      \
      : "memory")
template <class T>
__device__ __forceinline__ void wgmma_ss_n64(float (&d)[8][4], uint64_t a, uint64_t b,
                                             int accumulate) {
  if constexpr (std::is_same_v<T, bf16>)
    HWT_WGMMA_SS_N64("bf16");
  else
    HWT_WGMMA_SS_N64("f16");
}

// d[8][4] += A (64 x 16, registers) · B, where B's 16 contraction rows of 64 elements are
// stored row by row (an MN-major tile, read transposed).
#define HWT_WGMMA_RS_N64_T(TY)                                               \
  HWT_WGMMA_ASM(                                                             \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"                           \
      "wgmma.mma_async.sync.aligned.m64n64k16.f32." TY "." TY " " HWT_REGS32 \
      ", {%32,%33,%34,%35}, %36, p, 1, 1, 1;\n}\n"                           \
      : HWT_ACC32(d)                                                         \
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(1)           \
      : "memory")
template <class T>
__device__ __forceinline__ void wgmma_rs_n64_t(float (&d)[8][4], const uint32_t (&a)[4],
                                               uint64_t b) {
  if constexpr (std::is_same_v<T, bf16>)
    HWT_WGMMA_RS_N64_T("bf16");
  else
    HWT_WGMMA_RS_N64_T("f16");
}

#undef HWT_WGMMA_ASM
#undef HWT_WGMMA_SS_N32
#undef HWT_WGMMA_SS_N64
#undef HWT_WGMMA_RS_N64_T
#undef HWT_REGS16
#undef HWT_REGS32
#undef HWT_ACC4
#undef HWT_ACC16
#undef HWT_ACC32

}  // namespace hwt::cuda
