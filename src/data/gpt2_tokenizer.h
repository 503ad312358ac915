// GPT-2's byte-level BPE tokenizer (OpenAI's encoder.py): regex pre-tokenisation, bytes as
// printable letters, merges by rank, GPT-2's own ids (0..50256). Any bytes round-trip.
//
// Unlike the tokenizers learned from data, it has no [PAD], [UNK] or [CLS] (ids 0..2 are "!",
// "\"" and "#"), so it serves language modelling only (data.format = "text").
#pragma once

#include "data/byte_pair_encoder.h"
#include "data/gpt2_pretokenizer.h"
#include "data/gpt2_vocabulary.h"
#include "data/piece_cache.h"
#include "data/tokenizer.h"

namespace hwt {

class Gpt2Tokenizer final : public Tokenizer {
 public:
  static constexpr int64_t kVocabSize = 50257;
  static constexpr int32_t kEndOfText = 50256;  // <|endoftext|>
  static constexpr std::string_view kEndOfTextText = "<|endoftext|>";

  // With special_in_text, "<|endoftext|>" in the text is the one token kEndOfText; without,
  // it is encoded as the plain characters it is made of and kEndOfText never comes from text.
  Gpt2Tokenizer(const Gpt2Vocabulary& vocabulary, bool special_in_text);
  // GPT-2's files as scripts/setup.sh installs them.
  static std::unique_ptr<Gpt2Tokenizer> load_installed(bool special_in_text);

  int64_t vocab_size() const override { return kVocabSize; }
  int32_t end_of_text_id() const override { return kEndOfText; }
  // Safe to call from several threads at once on one tokenizer, and they do not wait for each
  // other: each call takes its own piece cache from a pool (piece_cache.h) for its duration.
  std::vector<int32_t> encode_prefix(std::string_view text, int64_t max_tokens) const override;
  // Cut where a piece provably starts (Gpt2Pretokenizer::next_cut), never inside
  // "<|endoftext|>" (it holds no whitespace); each part at least kMinPartBytes (a part's fixed
  // cost stays small beside its encoding), fewer parts where the text lacks cut points (no ASCII
  // space after a non-space).
  static constexpr size_t kMinPartBytes = size_t{1} << 16;
  std::vector<std::string_view> independent_parts(std::string_view text,
                                                  size_t parts) const override;
  std::string decode(const std::vector<int32_t>& ids) const override;
  nlohmann::json to_json() const override;
  // Loads the installed files; InputError unless they are the ones the JSON was written with.
  static std::unique_ptr<Gpt2Tokenizer> from_json(const nlohmann::json& j);

 private:
  // Appends the ids of `text` (no special tokens in it) until `out` holds max_tokens.
  void encode_ordinary(std::string_view text, int64_t max_tokens, PieceCache& cache,
                       std::vector<int32_t>& out) const;

  std::vector<std::string> token_bytes_;
  BytePairEncoder bpe_;
  Gpt2Pretokenizer pretokenizer_;
  uint64_t fingerprint_;
  bool special_in_text_;
  PieceCachePool caches_;
};

}  // namespace hwt
