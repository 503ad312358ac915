// Small models and random batches for whole-model tests.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "config/model_config.h"
#include "data/batch.h"
#include "model/model.h"
#include "test_util.h"

namespace hwt::test {

// A 2-layer pre-LN causal LM, 128 wide, with dropout. Head size 128 / heads: 64 (heads = 2)
// takes the tensor-core attention in bf16/f16, other sizes the generic kernels.
inline ModelConfig small_decoder(int64_t heads) {
  ModelConfig m;
  m.vocab_size = 64;
  m.max_seq = 32;
  m.hidden = 128;
  m.heads = heads;
  m.ffn = 512;
  m.layers = 2;
  m.dropout = 0.1;
  m.attn_dropout = 0.1;
  m.norm = NormPlacement::Pre;
  m.causal = true;
  m.activation = Activation::GeluTanh;
  m.head = Task::Lm;
  return m;
}

// Small two-layer causal LMs of every family generation serves (gpt2, llama, neox, qwen2); init_std
// 0.2 so that attention is far from uniform and logits are of order one. The vocabulary (97) is not
// a multiple of the stored rows.
inline ModelConfig lm_family(const std::string& name) {
  ModelConfig m;
  m.vocab_size = 97;
  m.max_seq = 80;
  m.hidden = 64;
  m.heads = 4;
  m.ffn = 128;
  m.layers = 2;
  m.dropout = m.attn_dropout = 0;
  m.causal = true;
  m.head = Task::Lm;
  m.init_std = 0.2;
  if (name == "gpt2") {  // learned positions, LayerNorm, heads of 15 stored padded to 16
    m.hidden = 60;
    m.activation = Activation::GeluTanh;
    return m;
  }
  m.position = Position::Rope;
  if (name == "neox") {  // parallel residual, a quarter of each head rotated, untied head
    m.parallel_residual = true;
    m.rope.fraction = 0.25;
    m.tie_embeddings = false;
    return m;
  }
  // llama and qwen2: grouped-query attention, RMSNorm, SwiGLU, no biases.
  m.kv_heads = 2;
  m.norm_kind = NormKind::RmsNorm;
  m.activation = Activation::SwiGlu;
  m.bias = false;
  m.tie_embeddings = false;
  if (name == "llama") {  // Llama 3's frequency scaling, active within these 80 positions
    m.rope.theta = 500000;
    m.rope.scaling_factor = 8;
    m.rope.original_max_seq = 32;
  } else {  // qwen2: q, k and v keep their biases
    m.rope.theta = 1e6;
    m.qkv_bias = true;
  }
  return m;
}

// Random ids (padded rows past their lengths for non-causal models) and the labels the model's
// heads need: next tokens (-1 at the end) for an LM, random classes otherwise.
inline Batch random_batch(const ModelConfig& m, int64_t batch, int64_t seq, uint64_t seed) {
  Batch b;
  b.batch = batch;
  b.seq = seq;
  const std::vector<float> u = test::randn(batch * seq * 3, seed);
  auto pick = [&](size_t i, int64_t n) {
    return static_cast<int32_t>(std::fmod(std::fabs(u[i]) * 1000.0f, static_cast<float>(n)));
  };
  for (int64_t i = 0; i < batch; ++i)
    b.lengths.push_back(static_cast<int32_t>(m.causal ? seq : std::max<int64_t>(3, seq - 5 * i)));
  for (int64_t i = 0; i < batch * seq; ++i) {
    const bool pad = i % seq >= b.lengths[static_cast<size_t>(i / seq)];
    b.ids.push_back(pad ? 0 : 1 + pick(static_cast<size_t>(i), m.vocab_size - 1));
  }
  if (has_sequence_labels(m.head))
    for (int64_t i = 0; i < batch; ++i)
      b.seq_labels.push_back(pick(static_cast<size_t>(batch * seq + i), m.num_labels));
  if (m.head == Task::Lm) {
    for (int64_t i = 0; i < batch * seq; ++i)
      b.token_labels.push_back(i % seq == seq - 1 ? -1 : b.ids[static_cast<size_t>(i + 1)]);
  } else if (has_token_labels(m.head)) {
    for (int64_t i = 0; i < batch * seq; ++i) {
      const bool pad = i % seq >= b.lengths[static_cast<size_t>(i / seq)];
      b.token_labels.push_back(
          pad ? -1 : pick(static_cast<size_t>(2 * batch * seq + i), m.num_token_labels));
    }
  }
  return b;
}

// The key part of a fused QKV bias gets no gradient (softmax ignores a constant added to a row
// of scores), so Adam turns rounding noise there into full steps: comparisons of weights after
// optimizer steps zero it on both sides. `values` holds parameter `name` of a model with
// unpadded widths (q | k | v biases: heads, then twice kv() heads of head_dim()).
template <class T>
void drop_key_bias(const std::string& name, const ModelConfig& m, std::vector<T>& values) {
  if (!name.ends_with("attn.qkv.bias")) return;
  const auto q = static_cast<std::ptrdiff_t>(m.hidden);
  const auto k = static_cast<std::ptrdiff_t>(m.kv() * m.head_dim());
  std::fill(values.begin() + q, values.begin() + q + k, T{0});
}

// Greedy picks of `steps` decode steps after prefilling `b` (a model planned with a KV cache):
// a pick per sequence per step, by one decode() and predictions() a step (chunk 0) or chained
// on the device in chunks of `chunk` steps (Model::decode_greedy).
inline std::vector<int32_t> greedy_picks(Model& m, const Batch& b, int64_t steps, int64_t chunk) {
  m.prefill(b);
  const std::vector<int32_t> prefilled = m.predictions().tokens;
  std::vector<int32_t> ids, picks;
  for (int64_t i = 0; i < b.batch; ++i)
    ids.push_back(
        prefilled[static_cast<size_t>(i * b.seq + b.lengths[static_cast<size_t>(i)] - 1)]);
  for (int64_t done = 0; done < steps;) {
    const int64_t n = chunk == 0 ? 1 : std::min(chunk, steps - done);
    std::vector<int32_t> got;
    if (chunk == 0) {
      m.decode(ids);
      got = m.predictions().tokens;
    } else {
      got = m.decode_greedy(ids, n);
    }
    picks.insert(picks.end(), got.begin(), got.end());
    ids.assign(got.end() - b.batch, got.end());
    done += n;
  }
  return picks;
}

}  // namespace hwt::test
