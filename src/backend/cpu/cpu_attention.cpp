// CpuBackend: multi-head and grouped-query attention, forward and backward, one (batch, head)
// pair at a time (backward: one K/V head with its group of query heads, which sum into its
// dK and dV). Like flash attention it keeps only the log-sum-exp per row; backward recomputes
// the probabilities. Masked positions get probability exactly zero.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "core/philox.h"

namespace hwt {
namespace {

struct HeadView {
  const AttentionDims& d;
  int64_t row_stride;  // elements between consecutive tokens in qkv
  int64_t b, h;

  int64_t seq() const { return d.seq; }
  // Number of keys query i may attend to (keys are a prefix: padding is at the end).
  int64_t keys_for(int64_t i, int64_t length) const {
    return d.causal ? std::min(i + 1, length) : length;
  }
  int64_t length() const {
    if (!d.key_lengths.defined()) return d.seq;
    return std::clamp<int64_t>(d.key_lengths.as<int32_t>()[b], 0, d.seq);
  }
  // Offsets into the packed qkv row of token t: part 0 = q (head h), 1 = k, 2 = v (h's K/V
  // head).
  int64_t qkv_offset(int64_t t, int part) const {
    const int64_t kv_head = h / (d.heads / d.kv());
    const int64_t at = part == 0 ? h : part == 1 ? d.heads + kv_head : d.heads + d.kv() + kv_head;
    return (b * d.seq + t) * row_stride + at * d.head_dim;
  }
  int64_t out_offset(int64_t t) const {
    return (b * d.seq + t) * d.heads * d.head_dim + h * d.head_dim;
  }
  // Dropout factors (0 or 1/(1-p)) of row i, keys [0, nk).
  void drop_factors(int64_t i, int64_t nk, float* f) const {
    if (!d.drop.active()) {
      std::fill(f, f + nk, 1.0f);
      return;
    }
    thread_local std::vector<uint8_t> keep;
    keep.resize(static_cast<size_t>(nk));
    const uint64_t first = static_cast<uint64_t>(((b * d.heads + h) * d.seq + i) * d.seq);
    dropout_keep_range(d.drop.seed, first, nk, d.drop.p, keep.data());
    const float scale = 1.0f / (1.0f - d.drop.p);
    for (int64_t j = 0; j < nk; ++j) f[j] = keep[static_cast<size_t>(j)] ? scale : 0.0f;
  }
};

float dot(const float* a, const float* b, int64_t n) {
  float s = 0;
  // Vectorised reduction (the compiler may not reassociate a plain float sum on its own).
#pragma omp simd reduction(+ : s)
  for (int64_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

void check_attention(const AttentionDims& d, const Tensor& qkv) {
  expect_f32(qkv, "qkv");
  HWT_CHECK(d.heads % d.kv() == 0, "attention kv_heads={} must divide heads={}", d.kv(), d.heads);
  HWT_CHECK(qkv.rows() == d.batch * d.seq && qkv.cols() == d.qkv_width(),
            "attention qkv {} for b={} s={} heads={} kv_heads={} d={}", qkv.str(), d.batch, d.seq,
            d.heads, d.kv(), d.head_dim);
  if (d.key_lengths.defined()) expect_i32(d.key_lengths, "key_lengths");
}

}  // namespace

void CpuBackend::attention_forward(const AttentionFwd& a) {
  const AttentionDims& d = a.dims;
  check_attention(d, a.qkv);
  const bool prune = a.prune.active();
  if (prune) {
    expect_i32(a.prune.counts, "attention prune counts");
    HWT_CHECK(a.prune.counts.numel() == 6, "attention prune counts {} must be i32 [6]",
              a.prune.counts.str());
  }
  const float tau = a.prune.tau;
  const float* qkv = a.qkv.as<float>();
  float *out = a.out.as<float>(), *lse = a.lse.as<float>();
  const int64_t S = d.seq, D = d.head_dim;
  int64_t zero_scores = 0, zero_probs = 0, pairs = 0;
#pragma omp parallel reduction(+ : zero_scores, zero_probs, pairs)
  {
    std::vector<float> p(static_cast<size_t>(S)), factor(static_cast<size_t>(S));
#pragma omp for collapse(2) schedule(static)
    for (int64_t b = 0; b < d.batch; ++b)
      for (int64_t h = 0; h < d.heads; ++h) {
        const HeadView hv{d, a.qkv.cols(), b, h};
        const int64_t len = hv.length();
        for (int64_t i = 0; i < S; ++i) {
          float* o = out + hv.out_offset(i);
          std::fill(o, o + D, 0.0f);
          const int64_t nk = hv.keys_for(i, len);
          float* row_lse = lse + (b * d.heads + h) * S + i;
          if (nk == 0) {
            *row_lse = -std::numeric_limits<float>::infinity();
            continue;
          }
          if (prune) pairs += nk;
          const float* q = qkv + hv.qkv_offset(i, 0);
          float mx = -std::numeric_limits<float>::infinity();
          for (int64_t j = 0; j < nk; ++j) {
            float s = d.scale * dot(q, qkv + hv.qkv_offset(j, 1), D);
            if (prune) {
              if (std::fabs(s) <= tau) s = 0.0f;
              zero_scores += s == 0.0f;
            }
            p[static_cast<size_t>(j)] = s;
            mx = std::max(mx, s);
          }
          double z = 0;
          for (int64_t j = 0; j < nk; ++j)
            z += std::exp(static_cast<double>(p[static_cast<size_t>(j)] - mx));
          const float l = mx + static_cast<float>(std::log(z));
          *row_lse = l;
          hv.drop_factors(i, nk, factor.data());
          for (int64_t j = 0; j < nk; ++j) {
            float w = std::exp(p[static_cast<size_t>(j)] - l);
            if (prune) {
              if (w <= tau) w = 0.0f;
              zero_probs += w == 0.0f;  // inference: no dropout factors
            }
            w *= factor[static_cast<size_t>(j)];
            if (w == 0.0f) continue;
            const float* v = qkv + hv.qkv_offset(j, 2);
            for (int64_t c = 0; c < D; ++c) o[c] += w * v[c];
          }
        }
      }
  }
  if (prune) {
    uint64_t counts[3];
    std::memcpy(counts, a.prune.counts.data, sizeof counts);
    counts[0] += static_cast<uint64_t>(zero_scores);
    counts[1] += static_cast<uint64_t>(zero_probs);
    counts[2] += static_cast<uint64_t>(pairs);
    std::memcpy(a.prune.counts.data, counts, sizeof counts);
  }
}

void CpuBackend::attention_backward(const AttentionBwd& a) {
  const AttentionDims& d = a.dims;
  check_attention(d, a.qkv);
  expect_f32(a.d_qkv, "d_qkv");
  const float *qkv = a.qkv.as<float>(), *out = a.out.as<float>(), *dout = a.d_out.as<float>();
  const float* lse = a.lse.as<float>();
  float* dqkv = a.d_qkv.as<float>();
  const int64_t S = d.seq, D = d.head_dim, group = d.heads / d.kv();
#pragma omp parallel
  {
    std::vector<float> ds(static_cast<size_t>(S * S)), factor(static_cast<size_t>(S));
#pragma omp for collapse(2) schedule(static)
    for (int64_t b = 0; b < d.batch; ++b)
      for (int64_t kv_head = 0; kv_head < d.kv(); ++kv_head)
        for (int64_t h = kv_head * group; h < (kv_head + 1) * group; ++h) {
          const HeadView hv{d, a.qkv.cols(), b, h};
          const int64_t len = hv.length();
          for (int64_t t = 0; t < S; ++t)
            for (int part = 0; part < 3; ++part) {
              if (part > 0 && h > kv_head * group)
                continue;  // the group's first head zeroes dK, dV
              float* g = dqkv + hv.qkv_offset(t, part);
              std::fill(g, g + D, 0.0f);
            }
          // dS_ij = P_ij (dP_ij - D_i), with dP_ij = m_ij (dO_i · V_j) and D_i = dO_i · O_i.
          for (int64_t i = 0; i < S; ++i) {
            const int64_t nk = hv.keys_for(i, len);
            const float* q = qkv + hv.qkv_offset(i, 0);
            const float* dO = dout + hv.out_offset(i);
            const float Di = dot(dO, out + hv.out_offset(i), D);
            const float l = lse[(b * d.heads + h) * S + i];
            hv.drop_factors(i, nk, factor.data());
            for (int64_t j = 0; j < nk; ++j) {
              const float pij = std::exp(d.scale * dot(q, qkv + hv.qkv_offset(j, 1), D) - l);
              const float m = factor[static_cast<size_t>(j)];
              // dV_j += P_ij m_ij dO_i
              float* dv_row = dqkv + hv.qkv_offset(j, 2);
              const float w = pij * m;
              if (w != 0.0f)
                for (int64_t c = 0; c < D; ++c) dv_row[c] += w * dO[c];
              const float dp = m * dot(dO, qkv + hv.qkv_offset(j, 2), D);
              ds[static_cast<size_t>(i * S + j)] = pij * (dp - Di);
            }
          }
          for (int64_t i = 0; i < S; ++i) {
            const int64_t nk = hv.keys_for(i, len);
            float* dq = dqkv + hv.qkv_offset(i, 0);
            const float* q = qkv + hv.qkv_offset(i, 0);
            for (int64_t j = 0; j < nk; ++j) {
              const float g = d.scale * ds[static_cast<size_t>(i * S + j)];
              if (g == 0.0f) continue;
              const float* k = qkv + hv.qkv_offset(j, 1);
              float* dk = dqkv + hv.qkv_offset(j, 1);
              for (int64_t c = 0; c < D; ++c) {
                dq[c] += g * k[c];
                dk[c] += g * q[c];
              }
            }
          }
        }
  }
  if (a.rope.rotary_dim > 0) rope_backward(a.rope);
}

}  // namespace hwt
