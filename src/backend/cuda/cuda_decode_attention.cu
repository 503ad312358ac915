// Generation's KV cache on the GPU: appending k and v, and attention of one query row per
// sequence over the cached keys, split over the keys when batch x heads leaves multiprocessors
// idle (flash-decoding: Dao et al. 2023, "Flash-Decoding for long-context inference"); and the
// greedy chain's step from one decode step's picks to the next step's inputs.
#include <algorithm>

#include "backend/cuda/cuda_common.cuh"

namespace hwt::cuda {
namespace {

constexpr int kDecodeWarps = 4;
constexpr int kMaxHeadDim = 256;
constexpr int64_t kMinChunk = 64;  // keys a split takes at least
constexpr int kRowsPerStep = 4;    // rows of keys a lane group has in flight at once

// The rotation of the pair (lo, hi) = (d, d + half) of a head by the angle with cosine co and
// sine si, as rope_forward turns it.
__device__ __forceinline__ float turned_lo(float lo, float hi, float co, float si) {
  return lo * co - hi * si;
}
__device__ __forceinline__ float turned_hi(float lo, float hi, float co, float si) {
  return hi * co + lo * si;
}

// DecodeAttention's append (its start): the new token's k and v come from qkv, k turned by the
// rotary tables (half = rotary_dim / 2, 0: none), and go to the cache at start[b].
struct Append {
  const int* start = nullptr;
  const float* cos = nullptr;
  const float* sin = nullptr;
  int half = 0;
};

// Elements d0 .. d0 + V - 1 of the head row p turned to position pos (rounded to T, as the
// turned row would be stored); those past the rotary part as they are. Where the rotary half is
// whole chunks, the chunk lies in one half and its partner chunk and angles load as vectors.
template <class T, int V>
__device__ __forceinline__ Pack<T, V> turned_pack(const T* p, int64_t d0, Pack<T, V> pk,
                                                  int64_t pos, const Append& ap) {
  const int64_t half = ap.half;
  if (d0 >= 2 * half) return pk;
  if constexpr (V % 4 == 0) {
    if (half % V == 0) {
      const bool low = d0 < half;
      const int64_t i0 = low ? d0 : d0 - half;
      const Pack<T, V> other = load_pack<T, V>(p + (low ? d0 + half : d0 - half));
      const float* co = ap.cos + pos * half + i0;
      const float* si = ap.sin + pos * half + i0;
#pragma unroll
      for (int q = 0; q < V; q += 4) {
        const float4 c4 = __ldg(reinterpret_cast<const float4*>(co + q));
        const float4 s4 = __ldg(reinterpret_cast<const float4*>(si + q));
        const float cv[4] = {c4.x, c4.y, c4.z, c4.w}, sv[4] = {s4.x, s4.y, s4.z, s4.w};
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const float mine = to_f<T>(pk.v[q + e]), theirs = to_f<T>(other.v[q + e]);
          pk.v[q + e] = from_f<T>(low ? turned_lo(mine, theirs, cv[e], sv[e])
                                      : turned_hi(theirs, mine, cv[e], sv[e]));
        }
      }
      return pk;
    }
  }
#pragma unroll
  for (int e = 0; e < V; ++e) {
    const int64_t d = d0 + e;
    if (d >= 2 * half) continue;
    const int64_t i = d < half ? d : d - half;
    const float co = __ldg(ap.cos + pos * half + i), si = __ldg(ap.sin + pos * half + i);
    const float lo = to_f<T>(p[i]), hi = to_f<T>(p[i + half]);
    pk.v[e] = from_f<T>(d < half ? turned_lo(lo, hi, co, si) : turned_hi(lo, hi, co, si));
  }
  return pk;
}

template <class T>
__global__ void kv_append_kernel(KvArgs a, const T* qkv, const int* start, int64_t seq, T* k,
                                 T* v) {
  const int64_t D = a.head_dim, n = a.batch * seq * a.kv_heads * D;
  const int64_t width = (a.heads + 2 * a.kv_heads) * D;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t d = i % D, h = (i / D) % a.kv_heads, row = i / (D * a.kv_heads);
    const int64_t b = row / seq, t = row % seq;
    const int64_t pos = (start ? start[b] : 0) + t;
    if (pos < 0 || pos >= a.capacity) continue;  // the host checked what it could
    const int64_t at = ((b * a.kv_heads + h) * a.capacity + pos) * D + d;
    k[at] = qkv[row * width + (a.heads + h) * D + d];
    v[at] = qkv[row * width + (a.heads + a.kv_heads + h) * D + d];
  }
}

// kv_append under rotary positions: a thread per column of each q, k and v head of a row. In
// the rotated part of a q or k head the thread of column d < half turns the pair (d, d + half)
// (the rope kernel's formula and rounding) and its partner's thread idles; k and v columns are
// then written to the cache.
template <class T>
__global__ void kv_append_rope_kernel(KvArgs a, T* qkv, const int* start, int64_t seq, T* k, T* v,
                                      const float* cos, const float* sin, int half) {
  const int64_t D = a.head_dim, heads = a.heads + 2 * a.kv_heads;
  const int64_t n = a.batch * seq * heads * D;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t d = i % D, slot = (i / D) % heads, row = i / (D * heads);
    const int64_t b = row / seq, pos = (start ? start[b] : 0) + row % seq;
    if (pos < 0 || pos >= a.capacity) continue;  // the host checked what it could
    T* x = qkv + row * heads * D + slot * D;
    const bool is_v = slot >= a.heads + a.kv_heads, is_k = slot >= a.heads && !is_v;
    const int64_t kh = slot - (is_v ? a.heads + a.kv_heads : a.heads);
    T* cache = is_v ? v : k;
    const int64_t at = ((b * a.kv_heads + kh) * a.capacity + pos) * D;
    if (!is_v && d < 2 * half) {
      if (d >= half) continue;  // the column's pair is turned by the thread of column d - half
      const float lo = to_f<T>(x[d]), hi = to_f<T>(x[d + half]);
      const float co = __ldg(cos + pos * half + d), si = __ldg(sin + pos * half + d);
      const T tlo = from_f<T>(turned_lo(lo, hi, co, si)),
              thi = from_f<T>(turned_hi(lo, hi, co, si));
      x[d] = tlo;
      x[d + half] = thi;
      if (is_k) {
        k[at + d] = tlo;
        k[at + d + half] = thi;
      }
    } else if (is_k || is_v) {
      cache[at + d] = x[d];
    }
  }
}

// Block (split, head, sequence): kDecodeWarps warps take the chunk's keys in turn. A key is read
// by a group of LK lanes, each loading C chunks of V elements (16 bytes where the head allows),
// so a warp reads 32 / LK consecutive keys side by side, kRowsPerStep rows of them in flight at
// once: the loads of a short chunk are issued together instead of one latency chain per key.
// Each lane group keeps an online softmax over its keys; the groups merge by shuffles, the warps
// in shared memory, and with several splits the last one of a (sequence, head) merges the splits.
template <class T, int V, int LK, int C>
__global__ void __launch_bounds__(kDecodeWarps * 32)
    decode_kernel(KvArgs a, const T* qkv, T* kc, T* vc, const int* lengths, T* out, float scale,
                  int64_t splits, float* partials, unsigned* done, Append ap) {
  constexpr int kGroups = 32 / LK;
  constexpr int64_t kStep = int64_t{kDecodeWarps} * kGroups * kRowsPerStep;
  wait_prior_grid();  // a dependent launch: qkv comes from the product before it
  release_next_grid();
  const int64_t split = blockIdx.x, h = blockIdx.y, b = blockIdx.z, D = a.head_dim;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, sub = lane % LK, group = lane / LK;
  const int64_t len = lengths[b], chunk = ceil_div(a.capacity, splits);
  const int64_t first = split * chunk, last = min(len, first + chunk);
  const int64_t group_size = a.heads / a.kv_heads, kvh = h / group_size;
  const T* row = qkv + b * (a.heads + 2 * a.kv_heads) * D;
  const T *q = row + h * D, *k_new = row + (a.heads + kvh) * D,
          *v_new = row + (a.heads + a.kv_heads + kvh) * D;
  T* kh = kc + (b * a.kv_heads + kvh) * a.capacity * D;
  T* vh = vc + (b * a.kv_heads + kvh) * a.capacity * D;
  // Appending, key `pos` is read from qkv (turned), and the group's first head writes it to
  // the cache; no other block reads that position of the cache in this step.
  const int64_t pos = ap.start ? ap.start[b] : -1;
  const bool writes = h % group_size == 0;
  // Element (c, e) of a lane is column (sub + LK c) V + e of the head.
  float qr[C][V], acc[C][V];
#pragma unroll
  for (int c = 0; c < C; ++c) {
    const int64_t d0 = (sub + int64_t{LK} * c) * V;
    Pack<T, V> pk{};
    if (d0 < D) {
      pk = load_pack<T, V>(q + d0);
      if (ap.half > 0 && pos >= 0) pk = turned_pack<T, V>(q, d0, pk, pos, ap);
    }
#pragma unroll
    for (int e = 0; e < V; ++e) {
      qr[c][e] = to_f<T>(pk.v[e]) * scale * kLog2e;  // scores in base 2
      acc[c][e] = 0.0f;
    }
  }
  float m = -INFINITY, l = 0.0f;
  // The loop runs alike for the whole warp (its shuffles need every lane); row u of this
  // group is key j0 + group + u kDecodeWarps kGroups.
  for (int64_t j0 = first + warp * kGroups; j0 < last; j0 += kStep) {
    Pack<T, V> kp[kRowsPerStep][C], vp[kRowsPerStep][C];
#pragma unroll
    for (int u = 0; u < kRowsPerStep; ++u) {
      const int64_t j = j0 + group + u * int64_t{kDecodeWarps} * kGroups;
#pragma unroll
      for (int c = 0; c < C; ++c) {
        const int64_t d0 = (sub + int64_t{LK} * c) * V;
        kp[u][c] = vp[u][c] = Pack<T, V>{};
        if (j < last && d0 < D) {
          const bool fresh = j == pos;
          kp[u][c] = load_pack<T, V>((fresh ? k_new : kh + j * D) + d0);
          vp[u][c] = load_pack<T, V>((fresh ? v_new : vh + j * D) + d0);
          if (fresh) {
            if (ap.half > 0) kp[u][c] = turned_pack<T, V>(k_new, d0, kp[u][c], pos, ap);
            if (writes) {
              store_pack<T, V>(kh + pos * D + d0, kp[u][c]);
              store_pack<T, V>(vh + pos * D + d0, vp[u][c]);
            }
          }
        }
      }
    }
    float s[kRowsPerStep];
    float m_new = m;
#pragma unroll
    for (int u = 0; u < kRowsPerStep; ++u) {
      s[u] = 0.0f;
#pragma unroll
      for (int c = 0; c < C; ++c)
#pragma unroll
        for (int e = 0; e < V; ++e) s[u] += qr[c][e] * to_f<T>(kp[u][c].v[e]);
#pragma unroll
      for (int o = LK / 2; o > 0; o >>= 1) s[u] += __shfl_xor_sync(0xffffffffu, s[u], o);
      if (j0 + group + u * int64_t{kDecodeWarps} * kGroups < last) m_new = fmaxf(m_new, s[u]);
    }
    if (m_new == -INFINITY) continue;  // this group's rows all lie past the chunk
    const float fix = exp2f(m - m_new);
    l *= fix;
#pragma unroll
    for (int c = 0; c < C; ++c)
#pragma unroll
      for (int e = 0; e < V; ++e) acc[c][e] *= fix;
#pragma unroll
    for (int u = 0; u < kRowsPerStep; ++u) {
      if (j0 + group + u * int64_t{kDecodeWarps} * kGroups >= last) continue;
      const float p = exp2f(s[u] - m_new);
      l += p;
#pragma unroll
      for (int c = 0; c < C; ++c)
#pragma unroll
        for (int e = 0; e < V; ++e) acc[c][e] += p * to_f<T>(vp[u][c].v[e]);
    }
    m = m_new;
  }
  // Merge the warp's lane groups: each pair rescaled to the larger max (a group with no keys,
  // max -inf, weighs nothing).
#pragma unroll
  for (int o = LK; o < 32; o <<= 1) {
    const float mo = __shfl_xor_sync(0xffffffffu, m, o), lo = __shfl_xor_sync(0xffffffffu, l, o);
    const float mx = fmaxf(m, mo);
    const float wa = m == -INFINITY ? 0.0f : exp2f(m - mx);
    const float wb = mo == -INFINITY ? 0.0f : exp2f(mo - mx);
    l = l * wa + lo * wb;
#pragma unroll
    for (int c = 0; c < C; ++c)
#pragma unroll
      for (int e = 0; e < V; ++e)
        acc[c][e] = acc[c][e] * wa + __shfl_xor_sync(0xffffffffu, acc[c][e], o) * wb;
    m = mx;
  }
  // Merge the warps: the block's max, then each warp's share rescaled to it.
  __shared__ float wm[kDecodeWarps], wl[kDecodeWarps];
  __shared__ float wacc[kDecodeWarps][kMaxHeadDim];
  if (lane == 0) {
    wm[warp] = m;
    wl[warp] = l;
  }
  if (group == 0) {
#pragma unroll
    for (int c = 0; c < C; ++c) {
      const int64_t d0 = (sub + int64_t{LK} * c) * V;
#pragma unroll
      for (int e = 0; e < V; ++e)
        if (d0 + e < D) wacc[warp][d0 + e] = acc[c][e];
    }
  }
  __syncthreads();
  float bm = -INFINITY;
  for (int w = 0; w < kDecodeWarps; ++w) bm = fmaxf(bm, wm[w]);
  float bl = 0.0f;
  for (int w = 0; w < kDecodeWarps; ++w)
    if (wm[w] != -INFINITY) bl += wl[w] * exp2f(wm[w] - bm);
  for (int64_t d = threadIdx.x; d < D; d += blockDim.x) {
    float o = 0.0f;
    for (int w = 0; w < kDecodeWarps; ++w)
      if (wm[w] != -INFINITY) o += wacc[w][d] * exp2f(wm[w] - bm);
    if (splits == 1) {
      out[b * a.heads * D + h * D + d] = from_f<T>(bl > 0 ? o / bl : 0.0f);
    } else {
      float* p = partials + ((b * a.heads + h) * splits + split) * (D + 2);
      p[2 + d] = o;
      if (d == 0) {
        p[0] = bm;
        p[1] = bl;
      }
    }
  }
  if (splits == 1) return;
  // The last split of (sequence, head) to finish combines them all (and readies its counter for
  // the next step): out = the splits' weighted values over their sums, each rescaled to the
  // largest max. No second kernel.
  __threadfence();  // this block's partial, before its count
  __syncthreads();
  __shared__ bool merges;
  unsigned* count = done + b * a.heads + h;
  if (threadIdx.x == 0) merges = atomicAdd(count, 1u) == splits - 1;
  __syncthreads();
  if (!merges) return;
  __threadfence();  // the other splits' partials, after their counts
  const float* p = partials + (b * a.heads + h) * splits * (D + 2);
  float mx = -INFINITY;
  for (int64_t s = 0; s < splits; ++s) mx = fmaxf(mx, __ldcg(p + s * (D + 2)));
  for (int64_t d = threadIdx.x; d < D; d += blockDim.x) {
    float o = 0.0f, z = 0.0f;
    for (int64_t s = 0; s < splits; ++s) {
      const float* ps = p + s * (D + 2);
      const float ms = __ldcg(ps);
      if (ms == -INFINITY) continue;  // a split past the sequence's keys
      const float w = exp2f(ms - mx);
      o += __ldcg(ps + 2 + d) * w;
      z += __ldcg(ps + 1) * w;
    }
    out[b * a.heads * D + h * D + d] = from_f<T>(z > 0 ? o / z : 0.0f);
  }
  if (threadIdx.x == 0) *count = 0;
}

template <class T, int V, int LK, int C>
void decode_launch(const Launch& l, const KvArgs& a, const void* qkv, void* k, void* v,
                   const int* lengths, void* out, float scale, int64_t splits, float* partials,
                   unsigned* done, const Append& ap) {
  const dim3 grid(static_cast<unsigned>(splits), static_cast<unsigned>(a.heads),
                  static_cast<unsigned>(a.batch));
  launch_kernel(l, true, decode_kernel<T, V, LK, C>, grid, kDecodeWarps * 32, 0, a,
                static_cast<const T*>(qkv), static_cast<T*>(k), static_cast<T*>(v), lengths,
                static_cast<T*>(out), scale, splits, partials, done, ap);
}

// The lanes per key: enough 16-byte chunks for the head (a power of two, at least 4, at most
// 32); a head not made of whole 16-byte chunks, or not aligned to them, is read element by
// element by the whole warp.
template <class T>
void decode_typed(const Launch& l, const KvArgs& a, const void* qkv, void* k, void* v,
                  const int* lengths, void* out, float scale, int64_t splits, float* partials,
                  unsigned* done, const Append& ap) {
  constexpr int V = kVec16<T>;
  const int64_t chunks = a.head_dim / V;
  auto run = [&](auto launch) {
    launch(l, a, qkv, k, v, lengths, out, scale, splits, partials, done, ap);
  };
  if (a.head_dim % V != 0 || !aligned16(qkv) || !aligned16(k) || !aligned16(v))
    run(decode_launch<T, 1, 32, kMaxHeadDim / 32>);
  else if (chunks <= 4)
    run(decode_launch<T, V, 4, 1>);
  else if (chunks <= 8)
    run(decode_launch<T, V, 8, 1>);
  else if (chunks <= 16)
    run(decode_launch<T, V, 16, 1>);
  else if (chunks <= 32)
    run(decode_launch<T, V, 32, 1>);
  else
    run(decode_launch<T, V, 32, kMaxHeadDim / (32 * V)>);
}

__global__ void decode_advance_kernel(const int* picks, int* ids, int* positions, int* lengths,
                                      int* tokens, int64_t batch, int capacity) {
  for (int64_t b = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; b < batch;
       b += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int pick = picks[b], p = positions[b];
    tokens[b * capacity + p] = pick;
    ids[b] = pick;
    const int next = min(p + 1, capacity - 1);
    positions[b] = next;
    lengths[b] = next + 1;
  }
}

}  // namespace

void kv_append(const Launch& l, const KvArgs& a, void* qkv, const int* start, int64_t seq, void* k,
               void* v, const float* rope_cos, const float* rope_sin, int rope_half) {
  const int64_t n = a.batch * seq * a.kv_heads * a.head_dim;
  if (n == 0) return;
  if (rope_half > 0) {
    const int64_t all = a.batch * seq * (a.heads + 2 * a.kv_heads) * a.head_dim;
    HWT_DISPATCH_FLOAT(a.dt, T,
                       (kv_append_rope_kernel<T><<<grid_for(l, all), kBlockThreads, 0, l.stream>>>(
                           a, static_cast<T*>(qkv), start, seq, static_cast<T*>(k),
                           static_cast<T*>(v), rope_cos, rope_sin, rope_half)));
    return;
  }
  HWT_DISPATCH_FLOAT(
      a.dt, T,
      (kv_append_kernel<T><<<grid_for(l, n), kBlockThreads, 0, l.stream>>>(
          a, static_cast<const T*>(qkv), start, seq, static_cast<T*>(k), static_cast<T*>(v))));
}

void decode_advance(const Launch& l, const int* picks, int* ids, int* positions, int* lengths,
                    int* tokens, int64_t batch, int64_t capacity) {
  if (batch == 0) return;
  decode_advance_kernel<<<grid_for(l, batch), kBlockThreads, 0, l.stream>>>(
      picks, ids, positions, lengths, tokens, batch, static_cast<int>(capacity));
}

int64_t decode_splits(const Launch& l, const KvArgs& a) {
  // Enough blocks for two per multiprocessor, each with at least kMinChunk keys.
  const int64_t pairs = a.batch * a.heads, want = ceil_div(int64_t{2} * l.sms, pairs);
  return std::max<int64_t>(1, std::min(want, ceil_div(a.capacity, kMinChunk)));
}

size_t decode_partial_floats(const KvArgs& a, int64_t splits) {
  return splits > 1 ? static_cast<size_t>(a.batch * a.heads * splits * (a.head_dim + 2)) : 0;
}

void decode_attention(const Launch& l, const KvArgs& a, const void* qkv, void* k, void* v,
                      const int* lengths, void* out, float scale, int64_t splits, float* partials,
                      unsigned* done, const int* start, const float* rope_cos,
                      const float* rope_sin, int rope_half) {
  if (a.batch * a.heads == 0) return;
  const Append ap{start, rope_cos, rope_sin, rope_half};
  HWT_DISPATCH_FLOAT(
      a.dt, T, decode_typed<T>(l, a, qkv, k, v, lengths, out, scale, splits, partials, done, ap));
}

}  // namespace hwt::cuda
