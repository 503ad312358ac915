// The transformer's shape and behaviour: every field is a config key under [model]. The
// defaults are the default job's model (small enough to train on two CPU cores in minutes).
#pragma once

#include <cstdint>
#include <string>

#include "backend/ops.h"

namespace hwt {

enum class NormPlacement : uint8_t { Pre, Post };
enum class HeadKind : uint8_t { Classify, Tokens, Joint, Lm };

struct ModelConfig {
  int64_t vocab_size = 0;  // 0: taken from the tokenizer
  int64_t max_seq = 128;   // learned positions
  int64_t hidden = 128;
  int64_t heads = 4;
  int64_t ffn = 512;
  int64_t layers = 2;
  double dropout = 0.1;       // embeddings, attention output, FFN output
  double attn_dropout = 0.1;  // attention probabilities
  NormPlacement norm = NormPlacement::Pre;
  bool causal = false;  // decoder (causal mask) or encoder (padding mask)
  Activation activation = Activation::Gelu;
  bool tie_embeddings = true;  // LM head shares the token embedding
  HeadKind head = HeadKind::Classify;
  Pooling pooling = Pooling::First;
  int64_t num_labels = 0;        // sequence classes; 0: from the data
  int64_t num_token_labels = 0;  // token classes; 0: from the data
  double ln_eps = 1e-5;
  double init_std = 0.02;

  int64_t head_dim() const { return hidden / heads; }
  bool has_sequence_head() const { return head == HeadKind::Classify || head == HeadKind::Joint; }
  bool has_token_head() const { return head == HeadKind::Tokens || head == HeadKind::Joint; }
};

// Throws InputError naming the first inconsistent field.
void validate(const ModelConfig& c);

}  // namespace hwt
