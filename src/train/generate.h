// Text generation from a causal language model with a KV cache: the prompts' prefill through the
// model's forward, then one decode step per new token (Model::prefill, Model::decode). Greedy at
// temperature 0, else sampling with top-k and top-p; stop strings and the tokenizer's end-of-text
// token end a sequence. Used by `hwt generate` and by `hwt predict` on an LM checkpoint.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "data/tokenizer.h"
#include "model/model.h"

namespace hwt {

struct SamplingOptions {
  double temperature = 0;  // 0: greedy
  int64_t top_k = 0;       // 0: every token
  double top_p = 1;        // the smallest set of most likely tokens holding this much probability
  uint64_t seed = 1;
};

struct GenerateOptions {
  int64_t max_new_tokens = 64;
  SamplingOptions sampling;
  std::vector<std::string> stop;  // a sequence ends before the first of these in its text
};

// Why a sequence ended.
enum class Finish { Length, Stop, EndOfText, Context };
std::string_view finish_name(Finish f);

struct Generation {
  std::vector<int32_t> prompt_ids, tokens;  // tokens: generated, up to the one that ended it
  std::string prompt_text;                  // the prompt as its tokens decode
  std::string text;                         // the continuation, cut before a stop string
  Finish finish = Finish::Length;
};

// Tokens and seconds of the two phases, for tokens/s.
struct GenerationSpeed {
  int64_t prefill_tokens = 0, decode_tokens = 0;
  double prefill_seconds = 0, decode_seconds = 0;
};

// The next token from one row of logits (the vocabulary's entries): the first largest at
// temperature 0; else softmax(logits / temperature) cut to the top_k most likely and then to the
// top_p nucleus (Holtzman et al. 2019), renormalised, and walked in token order to the Philox
// uniform (seed, draw).
int32_t sample_token(std::span<const float> logits, const SamplingOptions& s, uint64_t draw);

// Prompt token ids: each non-empty (InputError naming it otherwise) and at most model.max_seq.
std::vector<std::vector<int32_t>> encode_prompts(const Tokenizer& tok,
                                                 const std::vector<std::string>& prompts,
                                                 int64_t max_seq);

// How to plan the model (Model::plan) for these prompts: batch, prompt length, KV capacity (the
// longest prompt plus max_new_tokens, at most model.max_seq).
struct GenerationPlan {
  int64_t batch = 0, prompt_seq = 0, kv_capacity = 0;
};
GenerationPlan plan_generation(const std::vector<std::vector<int32_t>>& prompts,
                               int64_t max_new_tokens, int64_t max_seq);

// Runs the prompts together (each at its own length) on a model planned with plan_generation's
// figures or larger. Sequence i draws its n-th sampled token with draw index n, so a prompt gives
// the same tokens alone or in a batch. on_text(i, piece), when set, receives each sequence's
// continuation as it grows (text held back only while it may still turn into a stop string or
// ends inside a UTF-8 character).
std::vector<Generation> generate(Model& model, const Tokenizer& tok,
                                 const std::vector<std::vector<int32_t>>& prompts,
                                 const GenerateOptions& o,
                                 const std::function<void(size_t, std::string_view)>& on_text = {},
                                 GenerationSpeed* speed = nullptr);

}  // namespace hwt
