// Tokenizer: text to token ids and back. Ids 0..2 are the specials on the kinds learned from
// data (word, char), so padding and the classification token mean the same thing whatever the
// vocabulary; GPT-2's tokenizer keeps GPT-2's own ids and serves language modelling only.
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
  // Token ids of `text`, without [CLS]; unknown pieces become [UNK].
  std::vector<int32_t> encode(std::string_view text) const {
    return encode_prefix(text, std::numeric_limits<int64_t>::max());
  }
  // The first max_tokens ids of encode(text), without tokenising the rest (long e-mails are
  // cut to data.max_len anyway).
  virtual std::vector<int32_t> encode_prefix(std::string_view text, int64_t max_tokens) const = 0;
  // Text of `ids`: [PAD] and [CLS] are dropped, [UNK] is written as "[UNK]".
  virtual std::string decode(const std::vector<int32_t>& ids) const = 0;
  // {"kind": ..., ...}: everything needed to rebuild this tokenizer.
  virtual nlohmann::json to_json() const = 0;
  // Rebuilds a tokenizer written by to_json(); InputError on anything malformed.
  static std::unique_ptr<Tokenizer> from_json(const nlohmann::json& j);
};

// The tokenizer data.tokenizer names, learned from `texts` with the data.* vocabulary rules
// (gpt2: the installed GPT-2 files, `texts` unused).
// JointBERT text is split on whitespace only, so tokens stay aligned with their tags.
std::unique_ptr<Tokenizer> train_tokenizer(const DataConfig& c,
                                           const std::vector<std::string_view>& texts);

// A tokenizer that comes ready-made rather than learned from data, by name: "gpt2" (with
// special_in_text, "<|endoftext|>" in text is GPT-2's end-of-text token). InputError on another
// name.
std::unique_ptr<Tokenizer> pretrained_tokenizer(std::string_view name, bool special_in_text);

}  // namespace hwt
