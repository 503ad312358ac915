// Attention for any head size up to 256 and any dtype, computed in fp32 on CUDA cores, for the
// calls the tensor-core kernels (cuda_flash.cu, cuda_flash_mma.cu) do not take and for DynaTran's
// pruned forward; and the dispatch between the three. Flash-style: keys stream through
// shared memory in tiles of 32 with an online softmax; only the log-sum-exp per row is saved.
// Backward recomputes probabilities: one kernel for dQ (a warp per query row) and one for
// dK/dV (a warp per key row, summed over the query heads of its K/V head's group), both
// deterministic (no atomics).
#include <cfloat>

#include "backend/cuda/cuda_common.cuh"
#include "backend/cuda/cuda_kernels.h"
#include "core/integer_math.h"

namespace hwt::cuda {
namespace {

constexpr int kRows = 8;   // warps (query or key rows) per block
constexpr int kTile = 32;  // keys (or queries) per shared-memory tile

// Query head h of batch b, and the K/V head kh it reads.
struct Geo {
  int64_t S, H, KV, D, row_stride, out_stride;
  int64_t b, h, kh, L;
  __device__ Geo(const AttnArgs& a, int64_t b_, int64_t h_)
      : S(a.seq),
        H(a.heads),
        KV(a.kv()),
        D(a.head_dim),
        row_stride(a.qkv_stride()),
        out_stride(a.heads * a.head_dim),
        b(b_),
        h(h_),
        kh(h_ / a.group()) {
    L = a.key_lengths ? a.key_lengths[b] : a.seq;
    L = L < 0 ? 0 : (L > S ? S : L);
  }
  // Element offset of token t's part (0 q, 1 k, 2 v) of this head in qkv: q of the query head,
  // k and v of its K/V head.
  __device__ int64_t qkv(int64_t t, int part) const {
    return (b * S + t) * row_stride + (part == 0 ? h : H + (part - 1) * KV + kh) * D;
  }
  __device__ int64_t out(int64_t t) const { return (b * S + t) * out_stride + h * D; }
  __device__ int64_t row(int64_t i) const { return (b * H + h) * S + i; }  // lse / dvec index
  __device__ int64_t keys_for(int64_t i, bool causal) const {
    return causal ? (i + 1 < L ? i + 1 : L) : L;
  }
};

// The query row a warp owns in a block of kRows (rows past S are idle), the keys it sees, and
// the keys any row of the block sees (the bound of the block's tile loop).
struct QueryRow {
  int64_t i, nk, nk_block;
  __device__ QueryRow(const Geo& g, bool causal, int warp)
      : i(blockIdx.x * static_cast<int64_t>(kRows) + warp) {
    const int64_t last = (blockIdx.x + 1) * static_cast<int64_t>(kRows) - 1;
    nk = i < g.S ? g.keys_for(i, causal) : 0;
    nk_block = g.keys_for(last < g.S ? last : g.S - 1, causal);
  }
};

__device__ __forceinline__ float drop_mult(const AttnArgs& a, const Geo& g, int64_t i, int64_t j) {
  if (!a.drop.active()) return 1.0f;
  return dropout_factor(a.drop.seed, static_cast<uint64_t>(g.row(i) * g.S + j), a.drop.p,
                        a.drop.scale);
}

// Loads rows [r0, r0 + kTile) of one part into a float tile with row stride D + 1.
template <class T>
__device__ void load_rows(float* tile, const T* qkv, const Geo& g, int64_t r0, int part) {
  const int64_t D = g.D;
  for (int64_t e = threadIdx.x; e < kTile * D; e += blockDim.x) {
    const int64_t r = e / D, d = e % D;
    tile[r * (D + 1) + d] = r0 + r < g.S ? to_f<T>(qkv[g.qkv(r0 + r, part) + d]) : 0.0f;
  }
}

template <class T, int C>
__global__ void __launch_bounds__(kRows * 32) attn_fwd_generic(AttnArgs a) {
  extern __shared__ float sm[];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const Geo g(a, blockIdx.z, blockIdx.y);
  const int64_t D = g.D;
  float* sK = sm;
  float* sV = sK + kTile * (D + 1);
  float* sQ = sV + kTile * (D + 1) + warp * D;
  const T* qkv = static_cast<const T*>(a.qkv);
  const auto [i, nk, nk_block] = QueryRow(g, a.causal, warp);
  for (int64_t d = lane; d < D; d += 32) sQ[d] = i < g.S ? to_f<T>(qkv[g.qkv(i, 0) + d]) : 0.0f;
  float o[C] = {};
  float m = -INFINITY, l = 0.0f;
  for (int64_t j0 = 0; j0 < nk_block; j0 += kTile) {
    __syncthreads();
    load_rows<T>(sK, qkv, g, j0, 1);
    load_rows<T>(sV, qkv, g, j0, 2);
    __syncthreads();
    const int64_t j = j0 + lane;
    float s = -INFINITY;
    if (j < nk) {
      float acc = 0.0f;
      for (int64_t d = 0; d < D; ++d) acc += sQ[d] * sK[lane * (D + 1) + d];
      s = a.scale * acc;
    }
    const float m_new = fmaxf(m, warp_max(s));
    if (m_new == -INFINITY) continue;
    const float alpha = expf(m - m_new);
    const float p = j < nk ? expf(s - m_new) : 0.0f;
    l = l * alpha + warp_sum(p);
    const float pd = p * (j < nk ? drop_mult(a, g, i, j) : 0.0f);
#pragma unroll
    for (int c = 0; c < C; ++c) o[c] *= alpha;
    for (int jj = 0; jj < kTile; ++jj) {
      const float w = __shfl_sync(0xffffffffu, pd, jj);
#pragma unroll
      for (int c = 0; c < C; ++c) {
        const int64_t col = lane + 32 * c;
        if (col < D) o[c] += w * sV[jj * (D + 1) + col];
      }
    }
    m = m_new;
  }
  if (i >= g.S) return;
  const float inv = l > 0.0f ? 1.0f / l : 0.0f;
  T* out = static_cast<T*>(a.out) + g.out(i);
#pragma unroll
  for (int c = 0; c < C; ++c) {
    const int64_t col = lane + 32 * c;
    if (col < D) out[col] = from_f<T>(o[c] * inv);
  }
  if (lane == 0) a.lse[g.row(i)] = l > 0.0f ? m + logf(l) : -INFINITY;
}

// s = scale · q·k over one key row of a tile, set to 0 when |s| <= tau (tau 0: not pruned).
__device__ __forceinline__ float pruned_score(const float* q, const float* k, int64_t D,
                                              float scale, float tau) {
  float acc = 0.0f;
  for (int64_t d = 0; d < D; ++d) acc += q[d] * k[d];
  const float s = scale * acc;
  return fabsf(s) <= tau ? 0.0f : s;
}

// DynaTran's forward (AttentionPrune, no dropout): probabilities can only be pruned against their
// final values, so a first pass over the keys finds the pruned scores' log-sum-exp and a second
// one forms each probability, prunes it and adds it in.
template <class T, int C>
__global__ void __launch_bounds__(kRows * 32) attn_fwd_pruned(AttnArgs a) {
  extern __shared__ float sm[];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const Geo g(a, blockIdx.z, blockIdx.y);
  const int64_t D = g.D;
  float* sK = sm;
  float* sV = sK + kTile * (D + 1);
  float* sQ = sV + kTile * (D + 1) + warp * D;
  const T* qkv = static_cast<const T*>(a.qkv);
  const auto [i, nk, nk_block] = QueryRow(g, a.causal, warp);
  const float tau = a.prune_tau;
  for (int64_t d = lane; d < D; d += 32) sQ[d] = i < g.S ? to_f<T>(qkv[g.qkv(i, 0) + d]) : 0.0f;
  unsigned zero_scores = 0, zero_probs = 0;
  float m = -INFINITY, l = 0.0f;
  for (int64_t j0 = 0; j0 < nk_block; j0 += kTile) {
    __syncthreads();
    load_rows<T>(sK, qkv, g, j0, 1);
    __syncthreads();
    const int64_t j = j0 + lane;
    float s = -INFINITY;
    if (j < nk) {
      s = pruned_score(sQ, sK + lane * (D + 1), D, a.scale, tau);
      zero_scores += s == 0.0f;
    }
    const float m_new = fmaxf(m, warp_max(s));
    if (m_new == -INFINITY) continue;
    l = l * expf(m - m_new) + warp_sum(j < nk ? expf(s - m_new) : 0.0f);
    m = m_new;
  }
  const float lse = l > 0.0f ? m + logf(l) : -INFINITY;
  float o[C] = {};
  for (int64_t j0 = 0; j0 < nk_block; j0 += kTile) {
    __syncthreads();
    load_rows<T>(sK, qkv, g, j0, 1);
    load_rows<T>(sV, qkv, g, j0, 2);
    __syncthreads();
    const int64_t j = j0 + lane;
    float p = 0.0f;
    if (j < nk) {
      p = expf(pruned_score(sQ, sK + lane * (D + 1), D, a.scale, tau) - lse);
      if (p <= tau) p = 0.0f;
      zero_probs += p == 0.0f;
    }
    for (int jj = 0; jj < kTile; ++jj) {
      const float w = __shfl_sync(0xffffffffu, p, jj);
      if (w == 0.0f) continue;  // the same for the whole warp
#pragma unroll
      for (int c = 0; c < C; ++c) {
        const int64_t col = lane + 32 * c;
        if (col < D) o[c] += w * sV[jj * (D + 1) + col];
      }
    }
  }
  zero_scores = warp_sum(zero_scores);
  zero_probs = warp_sum(zero_probs);
  if (i >= g.S) return;
  T* out = static_cast<T*>(a.out) + g.out(i);
#pragma unroll
  for (int c = 0; c < C; ++c) {
    const int64_t col = lane + 32 * c;
    if (col < D) out[col] = from_f<T>(o[c]);
  }
  if (lane == 0) {
    a.lse[g.row(i)] = lse;
    atomicAdd(a.prune_counts, static_cast<unsigned long long>(zero_scores));
    atomicAdd(a.prune_counts + 1, static_cast<unsigned long long>(zero_probs));
    atomicAdd(a.prune_counts + 2, static_cast<unsigned long long>(nk));
  }
}

template <class T, int C>
__global__ void __launch_bounds__(kRows * 32) attn_dq_generic(AttnArgs a) {
  extern __shared__ float sm[];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const Geo g(a, blockIdx.z, blockIdx.y);
  const int64_t D = g.D;
  float* sK = sm;
  float* sV = sK + kTile * (D + 1);
  float* sQ = sV + kTile * (D + 1) + warp * 2 * D;
  float* sdO = sQ + D;
  const T* qkv = static_cast<const T*>(a.qkv);
  const T* dout = static_cast<const T*>(a.d_out);
  const auto [i, nk, nk_block] = QueryRow(g, a.causal, warp);
  for (int64_t d = lane; d < D; d += 32) {
    sQ[d] = i < g.S ? to_f<T>(qkv[g.qkv(i, 0) + d]) : 0.0f;
    sdO[d] = i < g.S ? to_f<T>(dout[g.out(i) + d]) : 0.0f;
  }
  const float lse = i < g.S ? a.lse[g.row(i)] : 0.0f;
  const float Di = i < g.S ? a.dvec[g.row(i)] : 0.0f;
  float dq[C] = {};
  for (int64_t j0 = 0; j0 < nk_block; j0 += kTile) {
    __syncthreads();
    load_rows<T>(sK, qkv, g, j0, 1);
    load_rows<T>(sV, qkv, g, j0, 2);
    __syncthreads();
    const int64_t j = j0 + lane;
    float ds = 0.0f;
    if (j < nk) {
      float s = 0.0f, dp = 0.0f;
      for (int64_t d = 0; d < D; ++d) {
        s += sQ[d] * sK[lane * (D + 1) + d];
        dp += sdO[d] * sV[lane * (D + 1) + d];
      }
      const float p = expf(a.scale * s - lse);
      ds = p * (dp * drop_mult(a, g, i, j) - Di);
    }
    for (int jj = 0; jj < kTile; ++jj) {
      const float w = __shfl_sync(0xffffffffu, ds, jj);
#pragma unroll
      for (int c = 0; c < C; ++c) {
        const int64_t col = lane + 32 * c;
        if (col < D) dq[c] += w * sK[jj * (D + 1) + col];
      }
    }
  }
  if (i >= g.S) return;
  T* out = static_cast<T*>(a.d_qkv) + g.qkv(i, 0);
#pragma unroll
  for (int c = 0; c < C; ++c) {
    const int64_t col = lane + 32 * c;
    if (col < D) out[col] = from_f<T>(dq[c] * a.scale);
  }
}

// blockIdx.y is the K/V head; its group's query heads are visited in order.
template <class T, int C>
__global__ void __launch_bounds__(kRows * 32) attn_dkv_generic(AttnArgs a) {
  extern __shared__ float sm[];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  Geo g(a, blockIdx.z, blockIdx.y * a.group());
  const int64_t D = g.D;
  float* sQ = sm;
  float* sdO = sQ + kTile * (D + 1);
  float* sLse = sdO + kTile * (D + 1);
  float* sD = sLse + kTile;
  float* sk = sD + kTile + warp * 2 * D;
  float* sv = sk + D;
  const T* qkv = static_cast<const T*>(a.qkv);
  const T* dout = static_cast<const T*>(a.d_out);
  const int64_t j0_block = blockIdx.x * static_cast<int64_t>(kRows);
  const int64_t j = j0_block + warp;
  for (int64_t d = lane; d < D; d += 32) {
    sk[d] = j < g.S ? to_f<T>(qkv[g.qkv(j, 1) + d]) : 0.0f;
    sv[d] = j < g.S ? to_f<T>(qkv[g.qkv(j, 2) + d]) : 0.0f;
  }
  float dk[C] = {}, dv[C] = {};
  const int64_t i_begin = a.causal ? j0_block : 0;
  const int64_t i_end = j0_block < g.L ? g.S : i_begin;  // keys past the length get nothing
  // Step `it` takes query tile it % per_head of the group's query head it / per_head.
  const int64_t h0 = g.h, per_head = ceil_div(i_end - i_begin, kTile);
  for (int64_t it = 0; it < a.group() * per_head; ++it) {
    g.h = h0 + it / per_head;
    const int64_t i0 = i_begin + (it % per_head) * kTile;
    __syncthreads();
    const int64_t D1 = D + 1;
    for (int64_t e = threadIdx.x; e < kTile * D; e += blockDim.x) {
      const int64_t r = e / D, d = e % D, ii = i0 + r;
      sQ[r * D1 + d] = ii < g.S ? to_f<T>(qkv[g.qkv(ii, 0) + d]) : 0.0f;
      sdO[r * D1 + d] = ii < g.S ? to_f<T>(dout[g.out(ii) + d]) : 0.0f;
    }
    for (int r = threadIdx.x; r < kTile; r += blockDim.x) {
      const int64_t ii = i0 + r;
      sLse[r] = ii < g.S ? a.lse[g.row(ii)] : 0.0f;
      sD[r] = ii < g.S ? a.dvec[g.row(ii)] : 0.0f;
    }
    __syncthreads();
    const int64_t i = i0 + lane;
    const bool valid = i < g.S && j < g.L && (!a.causal || j <= i);
    float pm = 0.0f, ds = 0.0f;
    if (valid) {
      float s = 0.0f, dp = 0.0f;
      for (int64_t d = 0; d < D; ++d) {
        s += sQ[lane * D1 + d] * sk[d];
        dp += sdO[lane * D1 + d] * sv[d];
      }
      const float p = expf(a.scale * s - sLse[lane]);
      const float mf = drop_mult(a, g, i, j);
      pm = p * mf;
      ds = p * (dp * mf - sD[lane]);
    }
    for (int ii = 0; ii < kTile; ++ii) {
      const float wv = __shfl_sync(0xffffffffu, pm, ii);
      const float wk = __shfl_sync(0xffffffffu, ds, ii);
#pragma unroll
      for (int c = 0; c < C; ++c) {
        const int64_t col = lane + 32 * c;
        if (col < D) {
          dv[c] += wv * sdO[ii * D1 + col];
          dk[c] += wk * sQ[ii * D1 + col];
        }
      }
    }
  }
  if (j >= g.S) return;
  T* dkp = static_cast<T*>(a.d_qkv) + g.qkv(j, 1);
  T* dvp = static_cast<T*>(a.d_qkv) + g.qkv(j, 2);
#pragma unroll
  for (int c = 0; c < C; ++c) {
    const int64_t col = lane + 32 * c;
    if (col < D) {
      dkp[col] = from_f<T>(dk[c] * a.scale);
      dvp[col] = from_f<T>(dv[c]);
    }
  }
}

// dvec[b, h, i] = dO_i · O_i, the row term of the softmax backward.
template <class T>
__global__ void dvec_kernel(AttnArgs a) {
  const int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (t >= a.batch * a.seq * a.heads) return;
  const int64_t h = t % a.heads, bs = t / a.heads, b = bs / a.seq, i = bs % a.seq;
  const int64_t off = bs * a.heads * a.head_dim + h * a.head_dim;
  const T* o = static_cast<const T*>(a.out) + off;
  const T* d = static_cast<const T*>(a.d_out) + off;
  float s = 0.0f;
  for (int64_t k = 0; k < a.head_dim; ++k) s += to_f<T>(o[k]) * to_f<T>(d[k]);
  a.dvec[(b * a.heads + h) * a.seq + i] = s;
}

// A block per kRows rows of each (batch, head): query heads, or K/V heads (dK/dV).
template <class Kernel>
void launch_generic(const Launch& l, Kernel kernel, const AttnArgs& a, size_t smem, int64_t heads) {
  if (smem > 48 * 1024)
    cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                         static_cast<int>(smem));
  const dim3 grid(static_cast<unsigned>(ceil_div(a.seq, kRows)), static_cast<unsigned>(heads),
                  static_cast<unsigned>(a.batch));
  kernel<<<grid, kRows * 32, smem, l.stream>>>(a);
}

template <class T, int C>
void generic_typed(const Launch& l, const AttnArgs& a, bool backward) {
  const size_t D = static_cast<size_t>(a.head_dim);
  const size_t tiles = 2 * kTile * (D + 1) * sizeof(float);
  if (!backward) {
    launch_generic(l, a.prune_counts ? attn_fwd_pruned<T, C> : attn_fwd_generic<T, C>, a,
                   tiles + kRows * D * sizeof(float), a.heads);
    return;
  }
  launch_generic(l, attn_dq_generic<T, C>, a, tiles + kRows * 2 * D * sizeof(float), a.heads);
  launch_generic(l, attn_dkv_generic<T, C>, a, tiles + (2 * kTile + kRows * 2 * D) * sizeof(float),
                 a.kv());
}

template <class T>
void generic_dispatch(const Launch& l, const AttnArgs& a, bool backward) {
  if (a.head_dim <= 32)
    generic_typed<T, 1>(l, a, backward);
  else if (a.head_dim <= 64)
    generic_typed<T, 2>(l, a, backward);
  else if (a.head_dim <= 128)
    generic_typed<T, 4>(l, a, backward);
  else
    generic_typed<T, 8>(l, a, backward);
}

template <class T>
__global__ void repack_kernel(const T* src, T* dst, int64_t groups, int64_t d_src, int64_t d_dst) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= groups * d_dst) return;
  const int64_t g = i / d_dst, k = i % d_dst;
  dst[i] = k < d_src ? src[g * d_src + k] : from_f<T>(0.0f);
}

void attention_dvec(const Launch& l, const AttnArgs& a) {
  const int64_t n = a.batch * a.seq * a.heads;
  HWT_DISPATCH_FLOAT(
      a.dt, T,
      dvec_kernel<T>
      <<<static_cast<unsigned>(ceil_div(n, kBlockThreads)), kBlockThreads, 0, l.stream>>>(a));
}

// d_qkv's k and v rows = the sum of the dkv_splits fp32 partials, in split order: four
// consecutive elements of a row per thread.
template <class T>
__global__ void dkv_sum_kernel(AttnArgs a) {
  const int64_t width = 2 * a.kv() * a.head_dim, n = a.batch * a.seq * width;
  const int64_t e = (blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x) * 4;
  if (e >= n) return;
  float4 sum = *reinterpret_cast<const float4*>(a.dkv_partials + e);
  for (int64_t s = 1; s < a.dkv_splits; ++s) {
    const float4 p = *reinterpret_cast<const float4*>(a.dkv_partials + s * n + e);
    sum.x += p.x;
    sum.y += p.y;
    sum.z += p.z;
    sum.w += p.w;
  }
  T* dst = static_cast<T*>(a.d_qkv) + e / width * a.qkv_stride() + a.heads * a.head_dim + e % width;
  const float v[4] = {sum.x, sum.y, sum.z, sum.w};
#pragma unroll
  for (int k = 0; k < 4; ++k) dst[k] = from_f<T>(v[k]);
}

}  // namespace

int64_t dkv_split_count(const Launch& l, int64_t blocks, int64_t group, int resident_per_sm) {
  const int64_t wanted = 2 * int64_t{l.sms} * (resident_per_sm > 1 ? resident_per_sm : 1);
  for (int64_t s = 1; s < group; ++s)
    if (group % s == 0 && blocks * s >= wanted) return s;
  return group;
}

int64_t attention_dkv_splits(const Launch& l, const AttnArgs& a, bool atomic_dq) {
  if (a.batch * a.seq == 0) return 1;
  if (flash_supported(a)) return flash_dkv_splits(l, a, atomic_dq);
  if (mma_attention_unsupported(a).empty()) return mma_dkv_splits(l, a);
  return 1;
}

void repack_heads(const Launch& l, DType dt, const void* src, void* dst, int64_t groups,
                  int64_t d_src, int64_t d_dst) {
  const int64_t n = groups * d_dst;
  if (n == 0) return;
  const unsigned blocks = static_cast<unsigned>(ceil_div(n, kBlockThreads));
  HWT_DISPATCH_FLOAT(dt, T,
                     repack_kernel<T><<<blocks, kBlockThreads, 0, l.stream>>>(
                         static_cast<const T*>(src), static_cast<T*>(dst), groups, d_src, d_dst));
}

std::string_view attention_slow_reason(const AttnArgs& a) {
  return flash_supported(a) ? std::string_view{} : mma_attention_unsupported(a);
}

void attention_forward(const Launch& l, const AttnArgs& a) {
  if (a.batch * a.seq == 0) return;
  const bool tensor_cores = a.prune_counts == nullptr;  // only the generic kernels prune
  if (tensor_cores && flash_supported(a)) return flash_forward(l, a);
  if (tensor_cores && mma_attention_unsupported(a).empty()) return mma_attention_forward(l, a);
  HWT_DISPATCH_FLOAT(a.dt, T, generic_dispatch<T>(l, a, false));
}

bool rope_fused(const AttnArgs& a) {
  if (a.rope_half % 8 != 0) return false;  // a pair's columns in one thread's fragments
  if (flash_supported(a)) return true;
  // Past 128 the mma.sync dK/dV kernel splits a row's columns over two warps.
  return mma_attention_unsupported(a).empty() && a.head_dim <= 128;
}

void attention_backward(const Launch& l, const AttnArgs& args) {
  if (args.batch * args.seq == 0) return;
  const bool rope_after = args.rope_half > 0 && !rope_fused(args);
  AttnArgs a = args;
  if (rope_after) a.rope_half = 0;
  if (flash_supported(a)) {
    flash_backward(l, a);
  } else if (mma_attention_unsupported(a).empty()) {
    mma_attention_backward(l, a);
  } else {
    attention_dvec(l, a);
    HWT_DISPATCH_FLOAT(a.dt, T, generic_dispatch<T>(l, a, true));
  }
  if (a.dkv_partials) {
    const int64_t n = a.batch * a.seq * 2 * a.kv() * a.head_dim / 4;
    HWT_DISPATCH_FLOAT(
        a.dt, T,
        dkv_sum_kernel<T>
        <<<static_cast<unsigned>(ceil_div(n, kBlockThreads)), kBlockThreads, 0, l.stream>>>(a));
  }
  if (rope_after) {
    RopeArgs r;
    r.dt = a.dt;
    r.qkv = a.d_qkv;
    r.cos = a.rope_cos;
    r.sin = a.rope_sin;
    r.rows = a.batch * a.seq;
    r.seq = a.seq;
    r.heads = a.heads;
    r.kv_heads = a.kv();
    r.head_dim = a.head_dim;
    r.rotary_dim = 2 * int64_t{args.rope_half};
    r.inverse = true;
    rope(l, r);
  }
}

}  // namespace hwt::cuda
