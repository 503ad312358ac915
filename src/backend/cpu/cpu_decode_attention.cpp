// CpuBackend: generation's KV cache: appending k and v, attention of one query row per sequence
// over the cached keys (a direct softmax; the CPU has no need to split the keys), and the greedy
// chain's next inputs.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "backend/cpu/cpu_backend.h"

namespace hwt {
namespace {

void check_cache(const KvCache& c, int64_t batch, int64_t kv, int64_t head_dim) {
  expect_f32(c.k, "kv cache k");
  expect_f32(c.v, "kv cache v");
  HWT_CHECK(c.k.shape.rank == 4 && c.k.dim(0) >= batch && c.k.dim(1) == kv &&
                c.k.dim(3) == head_dim && c.v.shape == c.k.shape,
            "kv cache {} / {} for batch={} kv_heads={} head_dim={}", c.k.str(), c.v.str(), batch,
            kv, head_dim);
}

}  // namespace

void CpuBackend::kv_append(const KvAppend& a) {
  expect_f32(a.qkv, "kv_append qkv");
  const int64_t kv = a.kv(), D = a.head_dim, width = (a.heads + 2 * kv) * D;
  HWT_CHECK(a.seq >= 1 && a.qkv.cols() == width && a.qkv.rows() % a.seq == 0,
            "kv_append qkv {} for seq={} heads={} kv_heads={} head_dim={}", a.qkv.str(), a.seq,
            a.heads, kv, D);
  const int64_t batch = a.qkv.rows() / a.seq, cap = a.cache.capacity();
  check_cache(a.cache, batch, kv, D);
  if (a.start.defined()) expect_i32(a.start, "kv_append start");
  std::vector<int32_t> positions(static_cast<size_t>(a.qkv.rows()));
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t start = a.start.defined() ? a.start.as<int32_t>()[b] : 0;
    HWT_CHECK(start >= 0 && start + a.seq <= cap, "kv_append positions {}..{} outside capacity {}",
              start, start + a.seq - 1, cap);
    for (int64_t t = 0; t < a.seq; ++t)
      positions[static_cast<size_t>(b * a.seq + t)] = static_cast<int32_t>(start + t);
  }
  if (a.rope.rotary_dim > 0) {
    HWT_CHECK(a.rope.qkv.data == a.qkv.data && !a.rope.positions.defined(),
              "kv_append: rope must turn this qkv, at the positions it appends");
    Rope turn = a.rope;
    turn.positions = Tensor{positions.data(), Shape{a.qkv.rows()}, DType::I32};
    rope_forward(turn);
  }
  const float* qkv = a.qkv.as<float>();
  float *k = a.cache.k.as<float>(), *v = a.cache.v.as<float>();
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t start = positions[static_cast<size_t>(b * a.seq)];
    for (int64_t t = 0; t < a.seq; ++t) {
      const float* row = qkv + (b * a.seq + t) * width;
      for (int64_t h = 0; h < kv; ++h) {
        const int64_t at = ((b * kv + h) * cap + start + t) * D;
        std::memcpy(k + at, row + (a.heads + h) * D, static_cast<size_t>(D) * sizeof(float));
        std::memcpy(v + at, row + (a.heads + kv + h) * D, static_cast<size_t>(D) * sizeof(float));
      }
    }
  }
}

void CpuBackend::decode_attention(const DecodeAttention& a) {
  if (a.start.defined()) {
    // Append (turning) from a copy of qkv, which the op leaves as it is, then attend with the
    // copy's turned q.
    expect_f32(a.qkv, "decode_attention qkv");
    expect_i32(a.start, "decode_attention start");
    expect_i32(a.lengths, "decode_attention lengths");
    const int64_t batch = a.qkv.rows();
    HWT_CHECK(a.start.numel() == batch && a.lengths.numel() == batch,
              "decode_attention start {} lengths {} for batch {}", a.start.str(), a.lengths.str(),
              batch);
    for (int64_t b = 0; b < batch; ++b)
      HWT_CHECK(a.start.as<int32_t>()[b] + 1 == a.lengths.as<int32_t>()[b],
                "decode_attention appends at {} for length {}", a.start.as<int32_t>()[b],
                a.lengths.as<int32_t>()[b]);
    std::vector<float> copy(a.qkv.as<float>(), a.qkv.as<float>() + a.qkv.numel());
    const Tensor turned{copy.data(), a.qkv.shape, DType::F32};
    KvAppend append{turned, a.cache, a.start, 1, a.heads, a.kv_heads, a.head_dim, a.rope};
    if (a.rope.rotary_dim > 0) {
      HWT_CHECK(a.rope.qkv.data == a.qkv.data, "decode_attention: rope must turn this qkv");
      append.rope.qkv = turned;
    }
    kv_append(append);
    DecodeAttention attend = a;
    attend.qkv = turned;
    attend.start = {};
    attend.rope = {};
    decode_attention(attend);
    return;
  }
  expect_f32(a.qkv, "decode_attention qkv");
  expect_f32(a.out, "decode_attention out");
  expect_i32(a.lengths, "decode_attention lengths");
  const int64_t kv = a.kv(), D = a.head_dim, batch = a.qkv.rows();
  HWT_CHECK(a.heads % kv == 0 && a.qkv.cols() == (a.heads + 2 * kv) * D && a.out.rows() == batch &&
                a.out.cols() == a.heads * D && a.lengths.numel() == batch,
            "decode_attention qkv {} out {} lengths {} for heads={} kv_heads={} head_dim={}",
            a.qkv.str(), a.out.str(), a.lengths.str(), a.heads, kv, D);
  check_cache(a.cache, batch, kv, D);
  const int64_t cap = a.cache.capacity(), group = a.heads / kv;
  const int32_t* lengths = a.lengths.as<int32_t>();
  for (int64_t b = 0; b < batch; ++b)
    HWT_CHECK(lengths[b] >= 1 && lengths[b] <= cap, "decode_attention length {} for capacity {}",
              lengths[b], cap);
  const float *qkv = a.qkv.as<float>(), *k = a.cache.k.as<float>(), *v = a.cache.v.as<float>();
  float* out = a.out.as<float>();
#pragma omp parallel for schedule(static)
  for (int64_t bh = 0; bh < batch * a.heads; ++bh) {
    const int64_t b = bh / a.heads, h = bh % a.heads, n = lengths[b];
    const float* q = qkv + b * a.qkv.cols() + h * D;
    const float* kh = k + (b * kv + h / group) * cap * D;
    const float* vh = v + (b * kv + h / group) * cap * D;
    thread_local std::vector<float> p;
    p.resize(static_cast<size_t>(n));
    float mx = -std::numeric_limits<float>::infinity();
    for (int64_t j = 0; j < n; ++j) {
      float s = 0;
      for (int64_t i = 0; i < D; ++i) s += q[i] * kh[j * D + i];
      p[static_cast<size_t>(j)] = s * a.scale;
      mx = std::max(mx, p[static_cast<size_t>(j)]);
    }
    double z = 0;
    for (float& x : p) z += (x = std::exp(x - mx));
    float* o = out + b * a.heads * D + h * D;
    std::fill(o, o + D, 0.0f);
    for (int64_t j = 0; j < n; ++j) {
      const float w = static_cast<float>(p[static_cast<size_t>(j)] / z);
      for (int64_t i = 0; i < D; ++i) o[i] += w * vh[j * D + i];
    }
  }
}

void CpuBackend::decode_advance(const DecodeAdvance& a) {
  const int64_t batch = a.checked_batch(), cap = a.tokens.dim(1);
  const int32_t* picks = a.picks.as<int32_t>();
  int32_t *ids = a.ids.as<int32_t>(), *pos = a.positions.as<int32_t>();
  int32_t *lengths = a.lengths.as<int32_t>(), *tokens = a.tokens.as<int32_t>();
  for (int64_t b = 0; b < batch; ++b) {
    HWT_CHECK(pos[b] >= 0 && pos[b] < cap, "decode_advance: position {} outside capacity {}",
              pos[b], cap);
    tokens[b * cap + pos[b]] = picks[b];
    ids[b] = picks[b];
    pos[b] = std::min(pos[b] + 1, static_cast<int32_t>(cap - 1));
    lengths[b] = pos[b] + 1;
  }
}

}  // namespace hwt
