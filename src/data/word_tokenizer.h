// Word-level tokenizer with a vocabulary learned from training text.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "data/tokenizer.h"

namespace hwt {

enum class WordSplit : uint8_t {
  Whitespace,  // tokens are whitespace-separated (pre-tokenised data with aligned tags)
  Words,       // runs of letters/digits (inner apostrophes kept) and single punctuation marks
};

struct WordTokenizerOptions {
  WordSplit split = WordSplit::Words;
  bool lowercase = true;  // ASCII only, so UTF-8 bytes are never altered
  int64_t min_freq = 1;
  int64_t max_vocab = 20000;  // including the specials
  // Counts only the first max_pieces pieces of each text, the part an example keeps after
  // data.max_len; 0 counts all.
  int64_t max_pieces = 0;
};

class WordTokenizer final : public Tokenizer {
 public:
  // Keeps words seen at least min_freq times, most frequent first with ties in byte order,
  // until the vocabulary (with the specials) has max_vocab entries.
  static std::unique_ptr<WordTokenizer> train(const std::vector<std::string_view>& texts,
                                              const WordTokenizerOptions& options);
  // words[i] gets id kNumSpecial + i; InputError on a duplicate or empty word.
  WordTokenizer(std::vector<std::string> words, WordSplit split, bool lowercase);

  int64_t vocab_size() const override { return kNumSpecial + std::ssize(words_); }
  std::vector<int32_t> encode_prefix(std::string_view text, int64_t max_tokens) const override;
  std::string decode(const std::vector<int32_t>& ids) const override;
  nlohmann::json to_json() const override;
  static std::unique_ptr<WordTokenizer> from_json(const nlohmann::json& j);

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::vector<std::string> words_;
  std::unordered_map<std::string, int32_t, Hash, std::equal_to<>> ids_;
  WordSplit split_;
  bool lowercase_;
};

}  // namespace hwt
