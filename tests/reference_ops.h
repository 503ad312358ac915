// Direct double-precision implementations of the backend ops' forward passes, written
// independently of the backends (textbook formulas, no fusion), for tests.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "backend/ops.h"
#include "core/philox.h"

namespace hwt::ref {

using Vec = std::vector<double>;

inline double activation(Activation a, double x) {
  switch (a) {
    case Activation::None:
      return x;
    case Activation::Relu:
      return x > 0 ? x : 0;
    case Activation::Gelu:
      return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
    case Activation::GeluTanh:
    case Activation::GeGlu:  // the gate's function
      return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
    case Activation::SwiGlu:
      return x / (1 + std::exp(-x));
  }
  return x;
}

// Gated MLP activation: pre [rows, 2n] = (gate | up) -> act(gate) · up [rows, n].
inline Vec glu(const Vec& pre, Activation kind, int64_t rows, int64_t n) {
  Vec y(static_cast<size_t>(rows * n));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j)
      y[static_cast<size_t>(r * n + j)] =
          activation(kind, pre[static_cast<size_t>(r * 2 * n + j)]) *
          pre[static_cast<size_t>(r * 2 * n + n + j)];
  return y;
}

// RMSNorm (Zhang & Sennrich 2019) over each row's first w of n columns; zero after them.
inline Vec rmsnorm(const Vec& x, const Vec& g, int64_t rows, int64_t n, int64_t w, double eps) {
  Vec y(x.size(), 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    double ms = 0;
    for (int64_t j = 0; j < w; ++j)
      ms += x[static_cast<size_t>(r * n + j)] * x[static_cast<size_t>(r * n + j)];
    const double rstd = 1 / std::sqrt(ms / static_cast<double>(w) + eps);
    for (int64_t j = 0; j < w; ++j)
      y[static_cast<size_t>(r * n + j)] =
          x[static_cast<size_t>(r * n + j)] * rstd * g[static_cast<size_t>(j)];
  }
  return y;
}

// Rotary embedding from its definition (RoFormer, in GPT-NeoX's rotate-half pairing): the q and
// k heads (the first heads + kv of each row's head-major groups of d) have element i < rot/2
// and element i + rot/2 turned by angle t · theta^(-2i/rot), t = row % seq.
inline Vec rope(const Vec& qkv, int64_t rows, int64_t seq, int64_t heads, int64_t kv, int64_t d,
                int64_t rot, double theta) {
  Vec y = qkv;
  const int64_t width = (heads + 2 * kv) * d, half = rot / 2;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t h = 0; h < heads + kv; ++h)
      for (int64_t i = 0; i < half; ++i) {
        const double angle =
            static_cast<double>(r % seq) *
            std::pow(theta, -2.0 * static_cast<double>(i) / static_cast<double>(rot));
        const size_t a = static_cast<size_t>(r * width + h * d + i),
                     b = a + static_cast<size_t>(half);
        y[a] = qkv[a] * std::cos(angle) - qkv[b] * std::sin(angle);
        y[b] = qkv[b] * std::cos(angle) + qkv[a] * std::sin(angle);
      }
  return y;
}

// Inverted-dropout factor of element i: 0 or 1/(1-p).
inline double drop_factor(const Dropout& d, uint64_t i) {
  if (!d.active()) return 1;
  return dropout_keep(d.seed, i, d.p) ? 1.0 / (1.0 - d.p) : 0.0;
}

// y[m,n] = act(sum_k x[m,k] w[n,k] + b[n])
inline Vec linear(const Vec& x, const Vec& w, const Vec& b, int64_t M, int64_t K, int64_t N,
                  Activation act) {
  Vec y(static_cast<size_t>(M * N));
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double s = b.empty() ? 0.0 : b[static_cast<size_t>(n)];
      for (int64_t k = 0; k < K; ++k)
        s += x[static_cast<size_t>(m * K + k)] * w[static_cast<size_t>(n * K + k)];
      y[static_cast<size_t>(m * N + n)] = activation(act, s);
    }
  return y;
}

inline Vec layernorm(const Vec& x, const Vec& g, const Vec& b, int64_t rows, int64_t n,
                     double eps) {
  Vec y(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    const double* row = x.data() + r * n;
    double mean = 0, var = 0;
    for (int64_t j = 0; j < n; ++j) mean += row[j];
    mean /= static_cast<double>(n);
    for (int64_t j = 0; j < n; ++j) var += (row[j] - mean) * (row[j] - mean);
    var /= static_cast<double>(n);
    for (int64_t j = 0; j < n; ++j)
      y[static_cast<size_t>(r * n + j)] =
          (row[j] - mean) / std::sqrt(var + eps) * g[static_cast<size_t>(j)] +
          b[static_cast<size_t>(j)];
  }
  return y;
}

inline Vec dropout(const Vec& x, const Dropout& d) {
  Vec y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] * drop_factor(d, i);
  return y;
}

// sum = residual + dropout(x)
inline Vec residual_sum(const Vec& x, const Vec& r, const Dropout& d) {
  Vec s = dropout(x, d);
  for (size_t i = 0; i < s.size(); ++i) s[i] += r[i];
  return s;
}

struct AttnSpec {
  int64_t batch, seq, heads, dim;
  bool causal;
  std::vector<int32_t> lengths;  // empty: all valid
  double scale;
  Dropout drop;
  double prune_tau = -1;  // >= 0: DynaTran (AttentionPrune) on the scores and probabilities
  int64_t kv_heads = 0;   // grouped-query attention; 0: heads
};

struct AttnPruneCounts {
  uint64_t zero_scores = 0, zero_probs = 0, pairs = 0;
};

// qkv [B*S, (H + 2*KV)*D] -> out [B*S, H*D], straight from the definition
// softmax(QKᵀ·scale + mask)V, query head h reading K/V head h / (H / KV);
// with a prune_tau, scores |s| <= tau are 0 before the softmax and probabilities p <= tau after
// it (counted over the unmasked pairs into `counts`).
inline Vec attention(const Vec& qkv, const AttnSpec& a, AttnPruneCounts* counts = nullptr) {
  const bool prune = a.prune_tau >= 0;
  const int64_t S = a.seq, H = a.heads, D = a.dim, KV = a.kv_heads > 0 ? a.kv_heads : H;
  const int64_t W = (H + 2 * KV) * D;
  Vec out(static_cast<size_t>(a.batch * S * H * D), 0.0);
  for (int64_t b = 0; b < a.batch; ++b) {
    const int64_t len = a.lengths.empty() ? S : a.lengths[static_cast<size_t>(b)];
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < S; ++i) {
        const int64_t k_at = (H + h / (H / KV)) * D, v_at = k_at + KV * D;
        Vec s(static_cast<size_t>(S), -std::numeric_limits<double>::infinity());
        double mx = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < S; ++j) {
          if (j >= len || (a.causal && j > i)) continue;
          double dotp = 0;
          for (int64_t c = 0; c < D; ++c)
            dotp += qkv[static_cast<size_t>((b * S + i) * W + h * D + c)] *
                    qkv[static_cast<size_t>((b * S + j) * W + k_at + c)];
          double sj = dotp * a.scale;
          if (prune && std::fabs(sj) <= a.prune_tau) sj = 0;
          if (counts) counts->zero_scores += sj == 0, ++counts->pairs;
          s[static_cast<size_t>(j)] = sj;
          mx = std::max(mx, sj);
        }
        if (mx == -std::numeric_limits<double>::infinity()) continue;
        double z = 0;
        for (int64_t j = 0; j < S; ++j) z += std::exp(s[static_cast<size_t>(j)] - mx);
        for (int64_t j = 0; j < S; ++j) {
          const bool masked = s[static_cast<size_t>(j)] == -std::numeric_limits<double>::infinity();
          double p = std::exp(s[static_cast<size_t>(j)] - mx) / z *
                     drop_factor(a.drop, static_cast<uint64_t>(((b * H + h) * S + i) * S + j));
          if (prune && p <= a.prune_tau) p = 0;
          if (counts && !masked) counts->zero_probs += p == 0;
          for (int64_t c = 0; c < D; ++c)
            out[static_cast<size_t>((b * S + i) * H * D + h * D + c)] +=
                p * qkv[static_cast<size_t>((b * S + j) * W + v_at + c)];
        }
      }
  }
  return out;
}

inline Vec embedding(const std::vector<int32_t>& ids, const Vec& table, const Vec& pos, int64_t h,
                     int64_t seq) {
  Vec out(ids.size() * static_cast<size_t>(h));
  for (size_t r = 0; r < ids.size(); ++r)
    for (int64_t j = 0; j < h; ++j)
      out[r * static_cast<size_t>(h) + static_cast<size_t>(j)] =
          table[static_cast<size_t>(ids[r] * h + j)] +
          (pos.empty() ? 0.0 : pos[static_cast<size_t>((static_cast<int64_t>(r) % seq) * h + j)]);
  return out;
}

inline Vec pool(const Vec& x, const std::vector<int32_t>& lengths, int64_t seq, int64_t h,
                Pooling mode) {
  const int64_t B = static_cast<int64_t>(lengths.size());
  Vec out(static_cast<size_t>(B * h), 0.0);
  for (int64_t b = 0; b < B; ++b) {
    const int64_t n = mode == Pooling::First ? 1 : lengths[static_cast<size_t>(b)];
    for (int64_t t = 0; t < n; ++t)
      for (int64_t j = 0; j < h; ++j)
        out[static_cast<size_t>(b * h + j)] +=
            x[static_cast<size_t>((b * seq + t) * h + j)] / static_cast<double>(n);
  }
  return out;
}

// Per-row -log softmax(x)[target]; 0 for ignored (negative) targets.
inline Vec cross_entropy(const Vec& logits, const std::vector<int32_t>& targets, int64_t C) {
  Vec loss(targets.size(), 0.0);
  for (size_t r = 0; r < targets.size(); ++r) {
    if (targets[r] < 0) continue;
    const double* x = logits.data() + r * static_cast<size_t>(C);
    const double mx = *std::max_element(x, x + C);
    double z = 0;
    for (int64_t j = 0; j < C; ++j) z += std::exp(x[j] - mx);
    loss[r] = mx + std::log(z) - x[targets[r]];
  }
  return loss;
}

}  // namespace hwt::ref
