// Generation's KV cache on the GPU: appending k and v, and attention of one query row per
// sequence over the cached keys, split over the keys when batch x heads leaves multiprocessors
// idle (flash-decoding: Dao et al. 2023, "Flash-Decoding for long-context inference").
#include <algorithm>

#include "backend/cuda/cuda_common.cuh"

namespace hwt::cuda {
namespace {

constexpr int kDecodeWarps = 4;
constexpr int kMaxPerLane = 8;     // head sizes up to 256: element d = lane + 32 i of a head
constexpr int64_t kMinChunk = 64;  // keys a split takes at least
constexpr int kKeysPerStep = 4;    // keys a warp reads at once

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
      const T tlo = from_f<T>(lo * co - hi * si), thi = from_f<T>(hi * co + lo * si);
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

// Block (split, head, sequence): kDecodeWarps warps take the chunk's keys in turn, each keeping
// an online softmax; the warps then merge in shared memory, and with several splits the last
// one of a (sequence, head) merges the splits.
template <class T>
__global__ void __launch_bounds__(kDecodeWarps * 32)
    decode_kernel(KvArgs a, const T* qkv, const T* kc, const T* vc, const int* lengths, T* out,
                  float scale, int64_t splits, float* partials, unsigned* done) {
  const int64_t split = blockIdx.x, h = blockIdx.y, b = blockIdx.z, D = a.head_dim;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int64_t len = lengths[b], chunk = ceil_div(a.capacity, splits);
  const int64_t first = split * chunk, last = min(len, first + chunk);
  const int64_t kvh = h / (a.heads / a.kv_heads);
  const T* q = qkv + b * (a.heads + 2 * a.kv_heads) * D + h * D;
  const T* kh = kc + (b * a.kv_heads + kvh) * a.capacity * D;
  const T* vh = vc + (b * a.kv_heads + kvh) * a.capacity * D;
  float qr[kMaxPerLane], acc[kMaxPerLane];
#pragma unroll
  for (int i = 0; i < kMaxPerLane; ++i) {
    const int64_t d = lane + 32 * i;
    qr[i] = d < D ? to_f<T>(q[d]) * scale * kLog2e : 0.0f;  // scores in base 2
    acc[i] = 0.0f;
  }
  float m = -INFINITY, l = 0.0f;
  // A warp takes kKeysPerStep consecutive keys at a time: their loads are in flight together
  // and their sums reduce side by side, instead of one key's latency chain after another's.
  for (int64_t j0 = first + warp * kKeysPerStep; j0 < last; j0 += kDecodeWarps * kKeysPerStep) {
    float s[kKeysPerStep], val[kKeysPerStep][kMaxPerLane];
#pragma unroll
    for (int u = 0; u < kKeysPerStep; ++u) {
      const int64_t j = j0 + u;
      s[u] = 0.0f;
#pragma unroll
      for (int i = 0; i < kMaxPerLane; ++i) {
        const int64_t d = lane + 32 * i;
        const bool in = j < last && d < D;
        s[u] += in ? qr[i] * to_f<T>(kh[j * D + d]) : 0.0f;
        val[u][i] = in ? to_f<T>(vh[j * D + d]) : 0.0f;
      }
    }
    float m_new = m;
#pragma unroll
    for (int u = 0; u < kKeysPerStep; ++u) {
      s[u] = warp_sum(s[u]);
      if (j0 + u < last) m_new = fmaxf(m_new, s[u]);
    }
    const float fix = exp2f(m - m_new);
    l *= fix;
#pragma unroll
    for (int i = 0; i < kMaxPerLane; ++i) acc[i] *= fix;
#pragma unroll
    for (int u = 0; u < kKeysPerStep; ++u) {
      if (j0 + u >= last) continue;
      const float p = exp2f(s[u] - m_new);
      l += p;
#pragma unroll
      for (int i = 0; i < kMaxPerLane; ++i) acc[i] += p * val[u][i];
    }
    m = m_new;
  }
  // Merge the warps: the block's max, then each warp's share rescaled to it.
  __shared__ float wm[kDecodeWarps], wl[kDecodeWarps];
  __shared__ float wacc[kDecodeWarps][kMaxPerLane * 32];
  if (lane == 0) {
    wm[warp] = m;
    wl[warp] = l;
  }
#pragma unroll
  for (int i = 0; i < kMaxPerLane; ++i) wacc[warp][lane + 32 * i] = acc[i];
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

template <class T>
void decode_typed(const Launch& l, const KvArgs& a, const void* qkv, const void* k, const void* v,
                  const int* lengths, void* out, float scale, int64_t splits, float* partials,
                  unsigned* done) {
  const dim3 grid(static_cast<unsigned>(splits), static_cast<unsigned>(a.heads),
                  static_cast<unsigned>(a.batch));
  decode_kernel<T><<<grid, kDecodeWarps * 32, 0, l.stream>>>(
      a, static_cast<const T*>(qkv), static_cast<const T*>(k), static_cast<const T*>(v), lengths,
      static_cast<T*>(out), scale, splits, partials, done);
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

int64_t decode_splits(const Launch& l, const KvArgs& a) {
  // Enough blocks for two per multiprocessor, each with at least kMinChunk keys.
  const int64_t pairs = a.batch * a.heads, want = ceil_div(int64_t{2} * l.sms, pairs);
  return std::max<int64_t>(1, std::min(want, ceil_div(a.capacity, kMinChunk)));
}

size_t decode_partial_floats(const KvArgs& a, int64_t splits) {
  return splits > 1 ? static_cast<size_t>(a.batch * a.heads * splits * (a.head_dim + 2)) : 0;
}

void decode_attention(const Launch& l, const KvArgs& a, const void* qkv, const void* k,
                      const void* v, const int* lengths, void* out, float scale, int64_t splits,
                      float* partials, unsigned* done) {
  if (a.batch * a.heads == 0) return;
  HWT_DISPATCH_FLOAT(a.dt, T,
                     decode_typed<T>(l, a, qkv, k, v, lengths, out, scale, splits, partials, done));
}

}  // namespace hwt::cuda
