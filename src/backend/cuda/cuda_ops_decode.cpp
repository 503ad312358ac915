// CudaBackend: generation's KV cache (kv_append, decode_attention) and greedy chain
// (decode_advance): checks, then the kernels of cuda_decode_attention.cu.
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_check.h"

namespace hwt {
namespace {

cuda::KvArgs kv_args(const Tensor& qkv, const KvCache& c, int64_t batch, int64_t heads, int64_t kv,
                     int64_t head_dim) {
  cuda::expect_float(qkv, "qkv");
  cuda::expect_dtype(c.k, qkv.dtype, "kv cache k");
  cuda::expect_dtype(c.v, qkv.dtype, "kv cache v");
  HWT_CHECK(kv >= 1 && heads % kv == 0 && qkv.cols() == (heads + 2 * kv) * head_dim,
            "kv cache qkv {} for heads={} kv_heads={} head_dim={}", qkv.str(), heads, kv, head_dim);
  HWT_CHECK(c.k.shape.rank == 4 && c.k.dim(0) >= batch && c.k.dim(1) == kv &&
                c.k.dim(3) == head_dim && c.v.shape == c.k.shape,
            "kv cache {} / {} for batch={} kv_heads={} head_dim={}", c.k.str(), c.v.str(), batch,
            kv, head_dim);
  cuda::KvArgs a;
  a.dt = qkv.dtype;
  a.batch = batch;
  a.heads = heads;
  a.kv_heads = kv;
  a.head_dim = head_dim;
  a.capacity = c.capacity();
  a.cache_batch = c.k.dim(0);
  return a;
}

// The rotary tables of an append at the positions it appends (none without rotary positions).
struct RopeTables {
  const float *cos = nullptr, *sin = nullptr;
  int half = 0;
};

RopeTables rope_tables(const Rope& rope, const Tensor& qkv, const cuda::KvArgs& k, const char* op) {
  if (rope.rotary_dim == 0) return {};
  HWT_CHECK(rope.qkv.data == qkv.data && !rope.positions.defined() && rope.heads == k.heads &&
                rope.kv() == k.kv_heads && rope.head_dim == k.head_dim,
            "{}: rope must turn this qkv, at the positions it appends", op);
  cuda::expect_dtype(rope.cos, DType::F32, "rope cos");
  cuda::expect_dtype(rope.sin, DType::F32, "rope sin");
  HWT_CHECK(rope.rotary_dim % 2 == 0 && rope.rotary_dim <= k.head_dim &&
                rope.cos.cols() == rope.rotary_dim / 2 && rope.cos.rows() >= k.capacity &&
                rope.sin.numel() == rope.cos.numel(),
            "{}: rope tables {} for rotary_dim {} must cover the cache's {} positions", op,
            rope.cos.str(), rope.rotary_dim, k.capacity);
  return {rope.cos.as<float>(), rope.sin.as<float>(), static_cast<int>(rope.rotary_dim / 2)};
}

}  // namespace

void CudaBackend::kv_append(const KvAppend& a) {
  HWT_CHECK(a.seq >= 1 && a.qkv.rows() % a.seq == 0, "kv_append qkv {} for seq {}", a.qkv.str(),
            a.seq);
  const int64_t batch = a.qkv.rows() / a.seq;
  const cuda::KvArgs k = kv_args(a.qkv, a.cache, batch, a.heads, a.kv(), a.head_dim);
  if (a.start.defined()) {
    cuda::expect_dtype(a.start, DType::I32, "kv_append start");
    HWT_CHECK(a.start.numel() == batch, "kv_append start {} for batch {}", a.start.str(), batch);
  } else {
    HWT_CHECK(a.seq <= k.capacity, "kv_append of {} positions into {}", a.seq, k.capacity);
  }
  const RopeTables t = rope_tables(a.rope, a.qkv, k, "kv_append");
  cuda::kv_append(launch_, k, a.qkv.data, a.start.defined() ? a.start.as<int>() : nullptr, a.seq,
                  a.cache.k.data, a.cache.v.data, t.cos, t.sin, t.half);
  cuda::check_launch("kv_append");
}

void CudaBackend::decode_attention(const DecodeAttention& a) {
  const int64_t batch = a.qkv.rows();
  const cuda::KvArgs k = kv_args(a.qkv, a.cache, batch, a.heads, a.kv(), a.head_dim);
  cuda::expect_dtype(a.lengths, DType::I32, "decode_attention lengths");
  cuda::expect_dtype(a.out, a.qkv.dtype, "decode_attention out");
  HWT_CHECK(a.lengths.numel() == batch && a.out.rows() == batch &&
                a.out.cols() == a.heads * a.head_dim && a.head_dim <= 256,
            "decode_attention out {} lengths {} for batch={} heads={} head_dim={} (at most 256)",
            a.out.str(), a.lengths.str(), batch, a.heads, a.head_dim);
  const int64_t splits = cuda::decode_splits(launch_, k);
  const size_t floats = cuda::decode_partial_floats(k, splits);
  float* partials = floats > 0 ? static_cast<float*>(scratch(floats * sizeof(float))) : nullptr;
  unsigned* done = floats > 0 ? zeroed_counters(batch * a.heads) : nullptr;
  // Appending: start[b] must be lengths[b] - 1, which live on the device.
  RopeTables t;
  if (a.start.defined()) {
    cuda::expect_dtype(a.start, DType::I32, "decode_attention start");
    HWT_CHECK(a.start.numel() == batch, "decode_attention start {} for batch {}", a.start.str(),
              batch);
    t = rope_tables(a.rope, a.qkv, k, "decode_attention");
  }
  cuda::decode_attention(launch_, k, a.qkv.data, a.cache.k.data, a.cache.v.data,
                         a.lengths.as<int>(), a.out.data, a.scale, splits, partials, done,
                         a.start.defined() ? a.start.as<int>() : nullptr, t.cos, t.sin, t.half);
  cuda::check_launch("decode_attention");
}

void CudaBackend::decode_advance(const DecodeAdvance& a) {
  const int64_t batch = a.checked_batch();
  for (const Tensor* t : {&a.picks, &a.ids, &a.positions, &a.lengths, &a.tokens})
    cuda::expect_on_device(*t, "decode_advance tensor");
  // Positions come from the device; they lie in [0, capacity) as Model::decode sets them and
  // this op keeps them.
  cuda::decode_advance(launch_, a.picks.as<int>(), a.ids.as<int>(), a.positions.as<int>(),
                       a.lengths.as<int>(), a.tokens.as<int>(), batch, a.tokens.dim(1));
  cuda::check_launch("decode_advance");
}

}  // namespace hwt
