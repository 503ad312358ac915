// Tokenizer: text to token ids and back. Ids 0..2 are the specials on the kinds learned from
// data (word, char), so padding and the classification token mean the same thing whatever the
// vocabulary; GPT-2's tokenizer keeps GPT-2's own ids and serves language modelling only.
// BERT's WordPiece keeps its vocabulary's ids too, specials included: datasets and batches ask
// pad_id(), unk_id(), cls_id() and sep_id() rather than using kPad, kUnk and kCls. A Hugging Face
// tokenizer.json (hf_tokenizer.h) keeps its file's ids and, like GPT-2's, serves LM only.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "config/data_config.h"

namespace hwt {

class Tokenizer {
 public:
  static constexpr int32_t kPad = 0, kUnk = 1, kCls = 2;
  static constexpr int32_t kNumSpecial = 3;

  virtual ~Tokenizer() = default;
  virtual int64_t vocab_size() const = 0;
  // The specials examples and batches are made of (GPT-2 has none: it serves LM only).
  virtual int32_t pad_id() const { return kPad; }
  virtual int32_t unk_id() const { return kUnk; }
  virtual int32_t cls_id() const { return kCls; }
  // Ends an example after its text when >= 0 (BERT's [SEP]); -1: examples have no end token.
  virtual int32_t sep_id() const { return -1; }
  // The token that separates documents in an LM stream when >= 0 (GPT-2's <|endoftext|>); -1:
  // none, documents are joined by a blank line instead.
  virtual int32_t end_of_text_id() const { return -1; }
  // The ids that end a generated sequence: end_of_text_id(), unless the model names its own
  // (HfTokenizer::set_stop_ids: an instruction-tuned model's end of turn, say).
  virtual std::vector<int32_t> stop_ids() const {
    const int32_t id = end_of_text_id();
    return id >= 0 ? std::vector<int32_t>{id} : std::vector<int32_t>{};
  }
  // A classification example: cls_id(), the first ids of `text`, then sep_id() when there is
  // one; max_len ids at most (max_len >= 2).
  std::vector<int32_t> encode_example(std::string_view text, int64_t max_len) const;
  // Token ids of `text`, without [CLS]; unknown pieces become [UNK].
  std::vector<int32_t> encode(std::string_view text) const {
    return encode_prefix(text, std::numeric_limits<int64_t>::max());
  }
  // The first max_tokens ids of encode(text), without tokenising the rest (long e-mails are
  // cut to data.max_len anyway).
  virtual std::vector<int32_t> encode_prefix(std::string_view text, int64_t max_tokens) const = 0;
  // `text` cut into at most `parts` consecutive pieces whose encodings, joined, are exactly
  // encode(text), so that threads can share one long text (encode_documents); the whole text as
  // one piece where the kind cannot cut it (all but GPT-2's byte-level BPE).
  virtual std::vector<std::string_view> independent_parts(std::string_view text,
                                                          size_t parts) const {
    (void)parts;
    return {text};
  }
  // Text of `ids`: [PAD] and [CLS] are dropped, [UNK] is written as "[UNK]".
  virtual std::string decode(const std::vector<int32_t>& ids) const = 0;
  // {"kind": ..., ...}: everything needed to rebuild this tokenizer.
  virtual nlohmann::json to_json() const = 0;
  // Rebuilds a tokenizer written by to_json(); InputError on anything malformed.
  static std::unique_ptr<Tokenizer> from_json(const nlohmann::json& j);
};

// The tokenizer data.tokenizer names, learned from `texts` with the data.* vocabulary rules
// (gpt2: the installed GPT-2 files; wordpiece and hf: data.vocab; `texts` unused by the three;
// hf without special tokens matched in text).
// JointBERT text is split on whitespace only, so tokens stay aligned with their tags.
std::unique_ptr<Tokenizer> train_tokenizer(const DataConfig& c,
                                           const std::vector<std::string_view>& texts);

// train_tokenizer's, or the tokenizer `given` describes (Tokenizer::to_json()) when not null.
std::unique_ptr<Tokenizer> train_tokenizer(const DataConfig& c,
                                           const std::vector<std::string_view>& texts,
                                           const nlohmann::json* given);

// A tokenizer that comes ready-made rather than learned from data, by name: "gpt2" (with
// special_in_text, "<|endoftext|>" in text is GPT-2's end-of-text token), "wordpiece" (BERT's
// vocab.txt at `vocab`, uncased with `lowercase`) or "hf" (a Hugging Face tokenizer.json at
// `vocab`; with special_in_text, its special tokens are matched in text). InputError on another
// name, and on a vocab given to gpt2 or missing for wordpiece or hf.
struct PretrainedTokenizerOptions {
  bool special_in_text = false;  // gpt2, hf
  std::string vocab;             // wordpiece: the vocab.txt file; hf: the tokenizer.json
  bool lowercase = true;         // wordpiece: an uncased model's normalisation
};
std::unique_ptr<Tokenizer> pretrained_tokenizer(std::string_view name,
                                                const PretrainedTokenizerOptions& o);

}  // namespace hwt
