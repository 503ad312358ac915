// Byte-level byte-pair encoding: a piece of text (any bytes) into token ids by applying merges
// in rank order, with the result of OpenAI's GPT-2 encoder.py (its `bpe` function).
#pragma once

#include <array>
#include <climits>
#include <cstdint>
#include <string_view>
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

  // Appends the ids of `piece` to `out`. Pieces of up to kShortPiece bytes merge in arrays on
  // the stack; longer ones use a heap of candidate pairs, O(n log n) in the piece's length,
  // instead of a rescan of the word after every merge.
  static constexpr size_t kShortPiece = 32;
  void encode(std::string_view piece, std::vector<int32_t>& out) const;
  // Appends the merged ids of a word given as its first symbols' ids (characters rather than
  // bytes: SentencePiece-style BPE), as encode() merges a piece's bytes.
  void merge(std::vector<int32_t> symbols, std::vector<int32_t>& out) const;
  // The heap's merges for a piece of any length; the same ids as encode() (public so that tests
  // compare the two ways).
  void encode_long(std::string_view piece, std::vector<int32_t>& out) const;

 private:
  struct RankedMerge {
    int32_t rank, merged;
  };
  static constexpr int32_t kNoRank = INT32_MAX;
  static uint64_t pair_key(int32_t left, int32_t right) {
    return static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32 | static_cast<uint32_t>(right);
  }
  // The merge of (left, right); rank kNoRank when there is none. Open addressing over a
  // power-of-two table of pair keys.
  RankedMerge find(int32_t left, int32_t right) const {
    const uint64_t key = pair_key(left, right);
    const size_t mask = slots_.size() - 1;
    for (size_t i = (key * 0x9E3779B97F4A7C15ull) >> shift_;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (s.key == key) return s.merge;
      if (s.key == kEmpty) return {kNoRank, -1};
    }
  }
  // Both merge the leftmost pair of the lowest rank next until no pair has a merge: short words
  // (at most kShortPiece symbols) in arrays on the stack, longer ones with a heap.
  void merge_short(const int32_t* symbols, size_t n, std::vector<int32_t>& out) const;
  void merge_long(std::vector<int32_t> symbols, std::vector<int32_t>& out) const;
  void size_table(size_t merges);  // an empty table for this many merges, at most half full
  // Puts (left, right) -> merge into the table; `replace`: a pair already there takes the new
  // merge (a later duplicate wins), otherwise it keeps its first.
  void insert(int32_t left, int32_t right, RankedMerge merge, bool replace);

  static constexpr uint64_t kEmpty = UINT64_MAX;  // no pair of ids >= 0 has this key
  struct Slot {
    uint64_t key = kEmpty;
    RankedMerge merge{kNoRank, -1};
  };
  std::array<int32_t, 256> byte_ids_;
  std::vector<Slot> slots_;  // a power of two, at most half full
  int shift_ = 64;           // 64 - log2(slots_.size()): the hash's top bits index the table
};

}  // namespace hwt
