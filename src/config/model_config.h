// The transformer's shape and behaviour: every field is a config key under [model]. The
// defaults are the default job's model (small enough to train on two CPU cores in minutes).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "core/activation_math.h"
#include "core/integer_math.h"
#include "core/norm_kind.h"
#include "core/pooling.h"

namespace hwt {

enum class NormPlacement : uint8_t { Pre, Post };

// How tokens know their position (model.position): a learned table added to the token
// embedding (GPT-2, BERT), rotary embeddings of q and k in every attention (Llama, Pythia), or
// nothing (a causal model can still infer order).
enum class Position : uint8_t { Learned, Rope, None };

// Rotary position embeddings (Su et al. 2021) as Hugging Face's models configure them.
struct RopeConfig {
  double theta = 10000;  // base of the angle frequencies (rope_theta)
  // The share of each head that turns (GPT-NeoX's rotary_pct: Pythia 0.25); the rest passes.
  double fraction = 1.0;
  // Llama 3's frequency scaling (Meta, Llama 3.1 and 3.2; 0: off): frequencies with wavelengths
  // above original_max_seq / low_freq_factor are divided by factor, those below
  // original_max_seq / high_freq_factor are kept, and those between are blended.
  double scaling_factor = 0, low_freq_factor = 1, high_freq_factor = 4;
  int64_t original_max_seq = 8192;
};

// What a model learns (model.head): the head on top of the transformer, and so the labels its
// data must carry.
enum class Task : uint8_t {
  Classify,  // one class per sequence
  Tokens,    // one tag per token
  Joint,     // both, losses summed (intent + slots)
  Lm,        // the next token at every position
};

std::string_view task_name(Task t);  // the model.head value: "classify", "tokens", ...

// A class per sequence: a pooled classifier head; the data carries sequence labels.
constexpr bool has_sequence_labels(Task t) {
  return t == Task::Classify || t == Task::Joint;
}
// A tag per token: a token classifier head; the data carries token labels.
constexpr bool has_token_labels(Task t) {
  return t == Task::Tokens || t == Task::Joint;
}
// Logits at every token position: token tags or, for an LM, next tokens.
constexpr bool has_token_outputs(Task t) {
  return t != Task::Classify;
}

// A tensor-train factorisation of one layer kind (model.tt.<kind>.*, after Tian et al. 2025);
// empty lists keep the kind dense. Linear kinds are TT: the weight [out, in] as a tensor indexed
// by the out factors then the in factors, one core [r_{k-1}, factor_k, r_k] per factor. The
// embedding is TTM: core k is [r_{k-1}, in_k, out_k, r_k] (in: vocabulary, out: hidden). ranks
// are the ranks between consecutive cores; the boundary ranks are 1.
struct TtFactors {
  std::vector<int64_t> in, out, ranks;
  bool enabled() const { return !in.empty() || !out.empty() || !ranks.empty(); }
};

// The layer kinds that can be tensor-trained: token embedding, attention projections (in and out
// factor model.hidden; the fused q|k|v projection triples the first out factor) and the
// feed-forward pair (in factors model.hidden, out factors model.ffn; the second layer swaps
// them).
struct TtConfig {
  TtFactors embedding, attention, ffn;
};

// Runtime pruning after TransCODE (docs/training.md): values with |x| <= tau become zero. 0 is off.
struct PruneConfig {
  double tau_infer = 0;     // DynaTran: activations in inference (eval, predict, evaluations)
  double tau_train = 0;     // DynaProp: parameter gradients before each optimizer step
  double tau_act_grad = 0;  // activation gradients leaving the dense layers' backward
  bool any() const { return tau_infer > 0 || tau_train > 0 || tau_act_grad > 0; }
};

struct ModelConfig {
  int64_t vocab_size = 0;  // 0: taken from the tokenizer
  // An LM's token embedding and head are stored with their rows padded to a multiple of this,
  // so its logits GEMMs run aligned; the padding rows stay zero and are never predicted.
  int64_t vocab_multiple = 128;
  int64_t max_seq = 128;  // learned positions
  int64_t hidden = 128;
  // The residual width is stored padded to a multiple of this (zero columns of the stream, zero
  // rows and columns of the weights on its side, each attention head padded too), so every
  // GEMM runs aligned; exact: layer norms normalise over the true width.
  int64_t hidden_multiple = 8;
  int64_t heads = 4;
  int64_t kv_heads = 0;  // K/V heads for grouped-query attention, dividing heads; 0: heads
  int64_t ffn = 512;
  // The feed-forward width is stored padded to a multiple of this (zero rows of the first FFN
  // weight and bias, zero columns of the second), so the FFN GEMMs run aligned; exact.
  int64_t ffn_multiple = 8;
  int64_t layers = 2;
  double dropout = 0.1;       // embeddings, attention output, FFN output
  double attn_dropout = 0.1;  // attention probabilities
  NormPlacement norm = NormPlacement::Pre;
  NormKind norm_kind = NormKind::LayerNorm;
  // Attention and MLP both read the block input: x + attn(LN1(x)) + mlp(LN2(x)) (GPT-J,
  // GPT-NeoX, Pythia); pre-norm only.
  bool parallel_residual = false;
  // RMSNorm over each q and k head before the rotation, a gamma of head_dim each (Qwen3,
  // Dehghani et al. 2023), with epsilon ln_eps.
  bool qk_norm = false;
  Position position = Position::Learned;
  RopeConfig rope;
  bool bias = true;       // biases of the blocks' linear maps
  bool qkv_bias = false;  // Q, K and V keep their biases when bias is false (Qwen2)
  bool causal = false;    // decoder (causal mask) or encoder (padding mask)
  Activation activation = Activation::Gelu;
  bool tie_embeddings = true;  // LM head shares the token embedding
  Task head = Task::Classify;
  Pooling pooling = Pooling::First;
  int64_t num_labels = 0;        // sequence classes; 0: from the data
  int64_t num_token_labels = 0;  // token classes; 0: from the data
  double ln_eps = 1e-5;
  double init_std = 0.02;
  TtConfig tt;
  PruneConfig prune;

  int64_t head_dim() const { return hidden / heads; }
  int64_t kv() const { return kv_heads > 0 ? kv_heads : heads; }
  bool gated() const { return is_gated(activation); }
  bool has_qkv_bias() const { return bias || qkv_bias; }
  // The elements of each head that rotary embeddings turn: fraction of the head, even.
  int64_t rotary_dim() const {
    const auto d = static_cast<int64_t>(rope.fraction * static_cast<double>(head_dim()));
    return d - d % 2;
  }
  // Rows of the stored token embedding (and LM head): for an LM, vocab_size rounded up to
  // vocab_multiple; other tasks have no logits over the vocabulary and store it as it is.
  int64_t padded_vocab() const {
    if (head != Task::Lm) return vocab_size;
    return round_up(vocab_size, vocab_multiple);
  }
  // The residual width as stored and multiplied: hidden rounded up to hidden_multiple. A
  // tensor-trained model keeps its widths (its factors multiply to the true ones).
  int64_t padded_hidden() const {
    const bool tt_any = tt.embedding.enabled() || tt.attention.enabled() || tt.ffn.enabled();
    return tt_any ? hidden : round_up(hidden, hidden_multiple);
  }
  // A head's width as stored: padded like the residual width when that is padded, so q, k, v
  // and the context run aligned too; a model whose hidden width needs no padding keeps its heads.
  int64_t padded_head_dim() const {
    return padded_hidden() == hidden ? head_dim() : round_up(head_dim(), hidden_multiple);
  }
  // The attention context's width as stored (q, k and v have this width each).
  int64_t padded_context() const { return heads * padded_head_dim(); }
  // The fused q|k|v projection's width as stored: heads queries and kv() keys and values.
  int64_t padded_qkv() const { return (heads + 2 * kv()) * padded_head_dim(); }
  // The feed-forward width as stored and multiplied: ffn rounded up to ffn_multiple (a
  // tensor-trained FFN stores no matrix to pad: its width is the true one).
  int64_t padded_ffn() const { return tt.ffn.enabled() ? ffn : round_up(ffn, ffn_multiple); }
};

// Throws InputError naming the first inconsistent field.
void validate(const ModelConfig& c);

}  // namespace hwt
