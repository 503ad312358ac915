#include "data/word_tokenizer.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <limits>

#include "core/error.h"
#include "data/text_io.h"

namespace hwt {
namespace {

// Bytes of UTF-8 characters count as letters, so non-ASCII words stay whole.
bool is_word_byte(unsigned char c) {
  return c >= 0x80 || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool is_space(unsigned char c) {
  return c == ' ' || (c >= '\t' && c <= '\r');
}

// `piece` lowercased (ASCII only) and made valid UTF-8; `buf` holds the result when that
// changes anything. Splitting the raw text first gives the same pieces: both steps map ASCII
// to ASCII and other bytes to non-ASCII bytes.
std::string_view normalise(std::string_view piece, bool lowercase, std::string& buf) {
  const bool clean = std::none_of(piece.begin(), piece.end(), [&](char c) {
    return static_cast<unsigned char>(c) >= 0x80 || (lowercase && c >= 'A' && c <= 'Z');
  });
  if (clean) return piece;
  buf = to_valid_utf8(piece);
  if (lowercase)
    for (char& c : buf)
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return buf;
}

// Calls f(piece) for the first max_pieces token-sized pieces of `s`, in order.
template <class F>
void for_each_piece(std::string_view s, WordSplit split, int64_t max_pieces, F&& f) {
  const auto at = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const size_t n = s.size();
  size_t i = 0;
  while (i < n && max_pieces > 0) {
    const unsigned char c = at(i);
    size_t j = i + 1;
    if (split == WordSplit::Whitespace) {
      if (is_space(c)) {
        i = j;
        continue;
      }
      while (j < n && !is_space(at(j))) ++j;
    } else if (is_word_byte(c)) {
      while (j < n &&
             (is_word_byte(at(j)) || (s[j] == '\'' && j + 1 < n && is_word_byte(at(j + 1)))))
        ++j;
    } else if (c < 0x21 || c == 0x7F) {  // whitespace and control characters separate
      i = j;
      continue;
    }  // otherwise a single punctuation mark
    f(s.substr(i, j - i));
    --max_pieces;
    i = j;
  }
}

const char* split_name(WordSplit s) {
  return s == WordSplit::Whitespace ? "whitespace" : "words";
}

}  // namespace

std::unique_ptr<WordTokenizer> WordTokenizer::train(const std::vector<std::string_view>& texts,
                                                    const WordTokenizerOptions& options) {
  std::unordered_map<std::string, int64_t, Hash, std::equal_to<>> counts;
  const int64_t max_pieces =
      options.max_pieces > 0 ? options.max_pieces : std::numeric_limits<int64_t>::max();
  std::string buf;
  for (std::string_view text : texts) {
    for_each_piece(text, options.split, max_pieces, [&](std::string_view raw) {
      const std::string_view piece = normalise(raw, options.lowercase, buf);
      auto it = counts.find(piece);
      if (it == counts.end()) it = counts.emplace(std::string(piece), 0).first;
      ++it->second;
    });
  }
  std::vector<std::pair<int64_t, std::string>> kept;  // (-count, word) sorts as wanted
  for (auto& [word, count] : counts)
    if (count >= options.min_freq) kept.emplace_back(-count, word);
  std::sort(kept.begin(), kept.end());
  const int64_t room = std::max<int64_t>(0, options.max_vocab - kNumSpecial);
  if (std::ssize(kept) > room) kept.resize(static_cast<size_t>(room));
  std::vector<std::string> words;
  words.reserve(kept.size());
  for (auto& kv : kept) words.push_back(std::move(kv.second));
  return std::make_unique<WordTokenizer>(std::move(words), options.split, options.lowercase);
}

WordTokenizer::WordTokenizer(std::vector<std::string> words, WordSplit split, bool lowercase)
    : words_(std::move(words)), split_(split), lowercase_(lowercase) {
  ids_.reserve(words_.size());
  for (size_t i = 0; i < words_.size(); ++i) {
    if (words_[i].empty()) fail_input("word tokenizer: empty word at index {}", i);
    if (!ids_.emplace(words_[i], static_cast<int32_t>(kNumSpecial + i)).second)
      fail_input("word tokenizer: word '{}' appears twice", words_[i]);
  }
}

std::vector<int32_t> WordTokenizer::encode_prefix(std::string_view text, int64_t max_tokens) const {
  std::vector<int32_t> ids;
  std::string buf;
  for_each_piece(text, split_, max_tokens, [&](std::string_view raw) {
    const auto it = ids_.find(normalise(raw, lowercase_, buf));
    ids.push_back(it == ids_.end() ? kUnk : it->second);
  });
  return ids;
}

std::string WordTokenizer::decode(const std::vector<int32_t>& ids) const {
  std::string out;
  for (int32_t id : ids) {
    HWT_CHECK(id >= 0 && id < vocab_size(), "token id {} outside vocabulary of {}", id,
              vocab_size());
    if (id == kPad || id == kCls) continue;
    if (!out.empty()) out += ' ';
    out += id == kUnk ? "[UNK]" : words_[static_cast<size_t>(id - kNumSpecial)];
  }
  return out;
}

nlohmann::json WordTokenizer::to_json() const {
  return {{"kind", "word"},
          {"split", split_name(split_)},
          {"lowercase", lowercase_},
          {"words", words_}};
}

std::unique_ptr<WordTokenizer> WordTokenizer::from_json(const nlohmann::json& j) {
  const std::string split = j.at("split").get<std::string>();
  if (split != "words" && split != "whitespace")
    fail_input("word tokenizer: unknown split '{}' (expected words or whitespace)", split);
  return std::make_unique<WordTokenizer>(
      j.at("words").get<std::vector<std::string>>(),
      split == "words" ? WordSplit::Words : WordSplit::Whitespace, j.at("lowercase").get<bool>());
}

}  // namespace hwt
