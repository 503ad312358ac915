// Byte-level byte-pair encoding: a piece of text (any bytes) into token ids by applying merges
// in rank order, with the result of OpenAI's GPT-2 encoder.py (its `bpe` function).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace hwt {

class BytePairEncoder {
 public:
  struct Merge {
    int32_t left, right, merged;  // token ids
  };
  // byte_ids[b] is the token of byte b; merges[r] has rank r (lower merges first). InputError
  // unless each merge joins tokens that exist before it (bytes or earlier merges) into a token
  // no byte or other merge makes, as a trained merge list does: then a merge never creates a
  // pair that ranks before it, which the merge loop relies on.
  BytePairEncoder(const std::array<int32_t, 256>& byte_ids, const std::vector<Merge>& merges,
                  int64_t vocab_size);
  // Merges as converters write them into Hugging Face tokenizer.json files (from SentencePiece
  // or tiktoken): in any order, a token made by several merges, a later duplicate pair winning
  // as in Hugging Face tokenizers. Only the ids' range is checked. The merge loop then does what
  // tokenizers' does: the lowest-ranked pair present merges next, the leftmost among equals.
  struct AnyOrder {};
  BytePairEncoder(const std::array<int32_t, 256>& byte_ids, const std::vector<Merge>& merges,
                  int64_t vocab_size, AnyOrder);

  // Appends the ids of `piece` to `out`. O(n log n) in the piece's length: a heap of candidate
  // pairs instead of a rescan of the word after every merge.
  void encode(std::string_view piece, std::vector<int32_t>& out) const;
  // Appends the merged ids of a word given as its first symbols' ids (characters rather than
  // bytes: SentencePiece-style BPE).
  void merge(std::vector<int32_t> symbols, std::vector<int32_t>& out) const;

 private:
  struct RankedMerge {
    int32_t rank, merged;
  };
  static uint64_t pair_key(int32_t left, int32_t right) {
    return static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32 | static_cast<uint32_t>(right);
  }
  const RankedMerge* find(int32_t left, int32_t right) const;

  std::array<int32_t, 256> byte_ids_;
  std::unordered_map<uint64_t, RankedMerge> merges_;
};

}  // namespace hwt
