// Learning byte-pair merges from word counts (Sennrich et al., 2016): start from an alphabet of
// symbols, repeatedly join the adjacent pair that occurs most often over all words, until the
// vocabulary has the size asked for. Both `hwt tokenizer train` kinds use it: byte-level BPE
// (symbols are bytes) and WordPiece (symbols are characters, those inside a word written with
// "##", as Hugging Face tokenizers' WordPiece trainer learns them).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace hwt {

struct WordCount {
  std::vector<int32_t> symbols;  // ids into the alphabet
  int64_t count = 0;
};

struct MergeLearnerOptions {
  // The vocabulary learning stops at: the alphabet plus one symbol per merge.
  int64_t max_symbols = 0;
  // A pair seen fewer times than this is never merged (learning stops early instead).
  int64_t min_count = 2;
  // Written before every symbol that continues a word ("##" for WordPiece, "" for byte-level):
  // joining "a" and "##b" gives "ab", joining "##a" and "##b" gives "##ab".
  std::string continuation_prefix;
  // Called every few hundred merges with how many are learned (progress output).
  std::function<void(int64_t merges)> progress;
};

struct LearnedMerges {
  struct Merge {
    int32_t left, right, merged;  // symbol ids
  };
  std::vector<std::string> symbols;  // id -> text: the alphabet, then each merge's result
  std::vector<Merge> merges;         // in the order learned (rank 0 first)
};

// Learns merges over `words` starting from `alphabet` (whose texts must be distinct). The most
// frequent pair wins; ties go to the pair whose (left, right) ids are smaller, so the result is
// the same on every machine. A pair whose joined text is already a symbol is never merged: each
// merge makes a new symbol, as the byte-pair encoders require of their merge lists.
LearnedMerges learn_merges(std::vector<std::string> alphabet, std::vector<WordCount> words,
                           const MergeLearnerOptions& options);

}  // namespace hwt
