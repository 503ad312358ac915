// The "model" of a Hugging Face tokenizer.json, type BPE, in its two forms:
//  * byte-level (GPT-2, Llama 3, Qwen2, SmolLM; the pre-tokenizer ends in ByteLevel): tokens are
//    written in GPT-2's byte alphabet and a piece's bytes are merged;
//  * character-level (SentencePiece BPE: Llama 2, Mistral, TinyLlama): a piece's characters are
//    merged; a character the vocabulary lacks becomes its UTF-8 bytes as <0xNN> tokens
//    (byte_fallback) or the unknown token (fused with an unknown token before it with fuse_unk).
// Merges apply by rank, lowest first, left to right (BytePairEncoder).
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "data/byte_pair_encoder.h"

namespace hwt {

class HfBpeModel {
 public:
  // From the "model" value; InputError naming `file` for another type, an option hwt does not
  // implement (dropout, subword prefixes and suffixes) or a merge naming an unknown token.
  HfBpeModel(const nlohmann::json& j, bool byte_level, const std::string& file);

  // Appends the ids of one pre-tokenised piece.
  void encode(std::string_view piece, std::vector<int32_t>& out) const;

  bool byte_level() const { return byte_level_; }
  int32_t unk_id() const { return unk_; }  // -1: the file has no unknown token
  // Token text as the file writes it, by id ("" where no token has the id); ids of the
  // vocabulary only, not of added tokens.
  const std::vector<std::string>& tokens() const { return tokens_; }
  int32_t id(std::string_view token) const;  // -1 when not in the vocabulary

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, int32_t, Hash, std::equal_to<>> ids_;
  std::vector<std::string> tokens_;
  std::array<int32_t, 256> byte_tokens_{};  // byte -> its token (<0xNN> or the alphabet's)
  std::optional<BytePairEncoder> bpe_;      // made once the vocabulary is read
  bool byte_level_, byte_fallback_ = false, fuse_unk_ = false, ignore_merges_ = false;
  int32_t unk_ = -1;
};

}  // namespace hwt
