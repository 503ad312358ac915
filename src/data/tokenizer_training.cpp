#include "data/tokenizer_training.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <unordered_map>

#include "core/error.h"
#include "data/bert_basic_tokenizer.h"
#include "data/byte_level_alphabet.h"
#include "data/gpt2_pretokenizer.h"
#include "data/merge_learner.h"
#include "data/text_io.h"
#include "data/wordpiece_tokenizer.h"

namespace hwt {
namespace {

// How often each word (pre-tokenised piece) occurs; keyed by its bytes.
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using WordCounts = std::unordered_map<std::string, int64_t, StringHash, std::equal_to<>>;

void add_word(WordCounts& counts, std::string_view word) {
  const auto it = counts.find(word);
  if (it != counts.end())
    ++it->second;
  else
    counts.emplace(word, 1);
}

// How often each word of `texts` occurs, as `Cursor` over `splitter` cuts them (words longer
// than WordPiece's limit left out: they are one [UNK] whatever the vocabulary).
template <class Cursor, class Splitter>
WordCounts count_words(const std::vector<std::string_view>& texts,
                       const TokenizerTrainingOptions& o, const Splitter& splitter) {
  int64_t total = 0, done = 0;
  for (std::string_view t : texts) total += std::ssize(t);
  WordCounts counts;
  for (std::string_view text : texts) {
    Cursor cursor(splitter, text);
    std::string_view word;
    if constexpr (std::is_same_v<Cursor, BertBasicTokenizer::Cursor>) {
      int64_t chars = 0;
      while (cursor.next(word, chars))
        if (chars <= WordPieceTokenizer::kMaxWordChars) add_word(counts, word);
    } else {
      while (cursor.next(word)) add_word(counts, word);
    }
    done += std::ssize(text);
    if (o.progress) o.progress("counting words", done, total);
  }
  if (counts.empty()) fail_input("the corpus has no text to learn a vocabulary from");
  return counts;
}

void check_size(const TokenizerTrainingOptions& o, size_t alphabet) {
  if (o.vocab_size < static_cast<int64_t>(alphabet))
    fail_input(
        "vocabulary size {} is below the {} symbols the special tokens and this corpus's "
        "alphabet take",
        o.vocab_size, alphabet);
}

LearnedMerges learn(std::vector<std::string> alphabet, std::vector<WordCount> words,
                    const TokenizerTrainingOptions& o, std::string prefix) {
  check_size(o, alphabet.size());
  MergeLearnerOptions m;
  m.max_symbols = o.vocab_size;
  m.min_count = o.min_count;
  m.continuation_prefix = std::move(prefix);
  const int64_t target = o.vocab_size - std::ssize(alphabet);
  if (o.progress) m.progress = [&](int64_t merges) { o.progress("merges", merges, target); };
  return learn_merges(std::move(alphabet), std::move(words), m);
}

// Specials first; InputError on a repeated or empty one.
std::vector<std::string> specials_of(const TokenizerTrainingOptions& o,
                                     std::vector<std::string> defaults) {
  std::vector<std::string> specials = o.special_tokens.empty() ? defaults : o.special_tokens;
  for (size_t i = 0; i < specials.size(); ++i) {
    if (specials[i].empty()) fail_input("a special token is empty");
    if (std::find(specials.begin(), specials.begin() + static_cast<ptrdiff_t>(i), specials[i]) !=
        specials.begin() + static_cast<ptrdiff_t>(i))
      fail_input("special token '{}' is given twice", specials[i]);
  }
  return specials;
}

TrainedTokenizer train_byte_level(const std::vector<std::string_view>& texts,
                                  const TokenizerTrainingOptions& o) {
  const Gpt2Pretokenizer pretokenizer;
  const WordCounts counts = count_words<Gpt2Pretokenizer::Cursor>(texts, o, pretokenizer);

  // Specials, then the 256 byte symbols in code point order (as GPT-2's own ids are).
  std::vector<std::string> alphabet = specials_of(o, {"<|endoftext|>"});
  const auto specials = std::ssize(alphabet);
  std::vector<std::pair<std::string, uint8_t>> bytes;
  for (int b = 0; b < 256; ++b)
    bytes.emplace_back(byte_level_text(std::string(1, static_cast<char>(b))),
                       static_cast<uint8_t>(b));
  // UTF-8 order is code point order.
  std::sort(bytes.begin(), bytes.end());
  std::array<int32_t, 256> byte_id{};
  for (const auto& [symbol, b] : bytes) {
    byte_id[b] = static_cast<int32_t>(alphabet.size());
    alphabet.push_back(symbol);
  }
  std::vector<WordCount> words;
  words.reserve(counts.size());
  for (const auto& [piece, count] : counts) {
    WordCount w{{}, count};
    for (unsigned char c : piece) w.symbols.push_back(byte_id[c]);
    words.push_back(std::move(w));
  }
  const LearnedMerges learned = learn(std::move(alphabet), std::move(words), o, "");

  // Hugging Face's tokenizer.json for a byte-level BPE without a normalizer or post-processor:
  // the layout its ByteLevelBPETokenizer saves.
  nlohmann::ordered_json added = nlohmann::ordered_json::array();
  for (int64_t id = 0; id < specials; ++id)
    added.push_back({{"id", id},
                     {"content", learned.symbols[static_cast<size_t>(id)]},
                     {"single_word", false},
                     {"lstrip", false},
                     {"rstrip", false},
                     {"normalized", false},
                     {"special", true}});
  nlohmann::ordered_json vocab = nlohmann::ordered_json::object();
  for (size_t id = 0; id < learned.symbols.size(); ++id) vocab[learned.symbols[id]] = id;
  nlohmann::ordered_json merges = nlohmann::ordered_json::array();
  // "left right": byte-level symbols never hold a space (it is written as U+0120).
  for (const LearnedMerges::Merge& m : learned.merges)
    merges.push_back(learned.symbols[static_cast<size_t>(m.left)] + " " +
                     learned.symbols[static_cast<size_t>(m.right)]);
  const nlohmann::ordered_json byte_level = {{"type", "ByteLevel"},
                                             {"add_prefix_space", false},
                                             {"trim_offsets", true},
                                             {"use_regex", true}};
  nlohmann::ordered_json j;
  j["version"] = "1.0";
  j["truncation"] = nullptr;
  j["padding"] = nullptr;
  j["added_tokens"] = added;
  j["normalizer"] = nullptr;
  j["pre_tokenizer"] = byte_level;
  j["post_processor"] = nullptr;
  j["decoder"] = byte_level;
  j["model"] = {{"type", "BPE"},
                {"dropout", nullptr},
                {"unk_token", nullptr},
                {"continuing_subword_prefix", nullptr},
                {"end_of_word_suffix", nullptr},
                {"fuse_unk", false},
                {"byte_fallback", false},
                {"ignore_merges", false},
                {"vocab", vocab},
                {"merges", merges}};
  return {j.dump(2) + "\n", std::ssize(learned.symbols), std::ssize(learned.merges)};
}

TrainedTokenizer train_wordpiece(const std::vector<std::string_view>& texts,
                                 const TokenizerTrainingOptions& o) {
  std::vector<std::string> alphabet =
      specials_of(o, {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"});
  for (const char* needed : {"[PAD]", "[UNK]", "[CLS]", "[SEP]"})
    if (std::find(alphabet.begin(), alphabet.end(), needed) == alphabet.end())
      fail_input("a WordPiece vocabulary needs the special token {} (BERT's inputs use it)",
                 needed);
  const BertBasicTokenizer basic(o.lowercase);
  const WordCounts counts = count_words<BertBasicTokenizer::Cursor>(texts, o, basic);

  // Every character of the corpus alone and with "##" (inside a word), in code point order, so
  // any word made of seen characters has pieces.
  const std::string prefix = "##";
  // The bytes of the character at word[i] (BERT's words are valid UTF-8).
  const auto char_bytes = [](std::string_view word, size_t i) {
    return std::max<size_t>(1, utf8_length(word, i));
  };
  std::map<std::string, int32_t> chars;  // UTF-8 order is code point order
  for (const auto& [word, count] : counts)
    for (size_t i = 0; i < word.size(); i += char_bytes(word, i))
      chars.emplace(word.substr(i, char_bytes(word, i)), 0);
  std::map<std::string, int32_t> inner;
  for (auto& [c, id] : chars) {
    id = static_cast<int32_t>(alphabet.size());
    alphabet.push_back(c);
  }
  for (const auto& [c, id] : chars) {
    inner.emplace(c, static_cast<int32_t>(alphabet.size()));
    alphabet.push_back(prefix + c);
  }
  std::vector<WordCount> words;
  words.reserve(counts.size());
  for (const auto& [word, count] : counts) {
    WordCount w{{}, count};
    for (size_t i = 0; i < word.size();) {
      const size_t n = char_bytes(word, i);
      const std::string c = word.substr(i, n);
      w.symbols.push_back(i == 0 ? chars.at(c) : inner.at(c));
      i += n;
    }
    words.push_back(std::move(w));
  }
  const LearnedMerges learned = learn(std::move(alphabet), std::move(words), o, prefix);
  std::string vocab_txt;
  for (const std::string& s : learned.symbols) vocab_txt += s + "\n";
  return {vocab_txt, std::ssize(learned.symbols), std::ssize(learned.merges)};
}

}  // namespace

TrainedTokenizer train_tokenizer_file(const std::vector<std::string_view>& texts,
                                      const TokenizerTrainingOptions& options) {
  if (options.min_count < 1) fail_input("the minimum pair count must be at least 1");
  if (options.kind == "bpe") return train_byte_level(texts, options);
  if (options.kind == "wordpiece") return train_wordpiece(texts, options);
  fail_input("unknown tokenizer kind '{}' to train (bpe or wordpiece)", options.kind);
}

}  // namespace hwt
