#include "data/wordpiece_tokenizer.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <bit>
#include <cstring>
#include <limits>

#include "core/error.h"
#include "core/files.h"
#include "core/fingerprint.h"
#include "data/hash_bytes.h"
#include "data/text_io.h"

namespace hwt {
namespace {

// A vocab.txt line without its line end and trailing blanks (as BERT's reader strips them).
std::string_view trim_end(std::string_view s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

constexpr std::string_view kContinuation = "##";

}  // namespace

void WordPieceMap::reserve(size_t n) {
  const size_t size = std::bit_ceil(std::max<size_t>(16, n * 2));
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(size, Slot{});
  count_ = 0;
  for (const Slot& s : old)
    if (s.id >= 0) insert({s.data, s.size}, s.id);
}

void WordPieceMap::insert(std::string_view key, int32_t id) {
  if ((count_ + 1) * 2 > slots_.size()) reserve(count_ + 1);
  const size_t mask = slots_.size() - 1;
  for (size_t i = hash_bytes(key) & mask;; i = (i + 1) & mask) {
    Slot& s = slots_[i];
    if (s.id < 0) {
      s = {key.data(), static_cast<uint32_t>(key.size()), id};
      ++count_;
      longest_ = std::max(longest_, key.size());
      return;
    }
    if (std::string_view(s.data, s.size) == key) {
      s.id = id;
      return;
    }
  }
}

int32_t WordPieceMap::find(std::string_view key) const {
  if (slots_.empty() || key.size() > longest_) return -1;
  const size_t mask = slots_.size() - 1;
  for (size_t i = hash_bytes(key) & mask;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (s.id < 0) return -1;
    if (s.size == key.size() && std::memcmp(s.data, key.data(), key.size()) == 0) return s.id;
  }
}

WordPieceTokenizer::WordPieceTokenizer(std::string vocab_text, std::string source, bool lowercase)
    : vocab_text_(std::move(vocab_text)),
      source_(std::move(source)),
      basic_(lowercase),
      fingerprint_(fingerprint(vocab_text_)) {
  std::string_view rest = vocab_text_;
  while (!rest.empty()) {
    const size_t end = rest.find('\n');
    tokens_.push_back(trim_end(rest.substr(0, end)));
    rest.remove_prefix(end == std::string_view::npos ? rest.size() : end + 1);
  }
  if (tokens_.empty()) fail_input("WordPiece vocabulary {} is empty", source_);
  if (std::ssize(tokens_) > std::numeric_limits<int32_t>::max())
    fail_input("WordPiece vocabulary {} has too many tokens", source_);
  first_.reserve(tokens_.size());
  rest_.reserve(tokens_.size() / 4);
  for (size_t i = 0; i < tokens_.size(); ++i) {
    const std::string_view t = tokens_[i];
    const auto id = static_cast<int32_t>(i);
    if (t.starts_with(kContinuation) && t.size() > kContinuation.size())
      rest_.insert(t.substr(kContinuation.size()), id);
    else if (!t.empty())
      first_.insert(t, id);
  }
  const auto special = [&](std::string_view name, bool required) {
    const int32_t id = first_.find(name);
    if (id < 0 && required) fail_input("WordPiece vocabulary {} has no {} token", source_, name);
    return id;
  };
  pad_ = special("[PAD]", true);
  unk_ = special("[UNK]", true);
  cls_ = special("[CLS]", true);
  sep_ = special("[SEP]", true);
  mask_ = special("[MASK]", false);
}

std::unique_ptr<WordPieceTokenizer> WordPieceTokenizer::load(const std::string& path,
                                                             bool lowercase) {
  const std::string found = absolute_data_path(path);
  return std::make_unique<WordPieceTokenizer>(read_file(found, "WordPiece vocabulary"), found,
                                              lowercase);
}

void WordPieceTokenizer::encode_word(std::string_view word, int64_t chars,
                                     std::vector<int32_t>& out) const {
  if (chars > kMaxWordChars) {
    out.push_back(unk_);
    return;
  }
  const size_t before = out.size();
  size_t start = 0;
  while (start < word.size()) {
    const WordPieceMap& map = start == 0 ? first_ : rest_;
    size_t end = std::min(word.size(), start + map.longest());
    int32_t id = -1;
    for (; end > start; --end) {
      // Pieces end at code point boundaries only.
      if (end < word.size() && (static_cast<unsigned char>(word[end]) & 0xC0) == 0x80) continue;
      id = map.find(word.substr(start, end - start));
      if (id >= 0) break;
    }
    if (id < 0) {  // a word with no complete cut is one [UNK], as in BERT's tokenizer
      out.resize(before);
      out.push_back(unk_);
      return;
    }
    out.push_back(id);
    start = end;
  }
}

std::vector<int32_t> WordPieceTokenizer::encode_prefix(std::string_view text,
                                                       int64_t max_tokens) const {
  std::vector<int32_t> ids;
  if (max_tokens <= 0) return ids;
  ids.reserve(std::min(text.size() / 4 + 16, static_cast<size_t>(max_tokens)));
  BertBasicTokenizer::Cursor cursor(basic_, text);
  std::string_view word;
  int64_t chars = 0;
  while (std::ssize(ids) < max_tokens && cursor.next(word, chars)) encode_word(word, chars, ids);
  if (std::ssize(ids) > max_tokens) ids.resize(static_cast<size_t>(max_tokens));
  return ids;
}

std::string_view WordPieceTokenizer::token(int32_t id) const {
  HWT_CHECK(id >= 0 && id < vocab_size(), "token id {} outside vocabulary of {}", id, vocab_size());
  return tokens_[static_cast<size_t>(id)];
}

std::string WordPieceTokenizer::decode(const std::vector<int32_t>& ids) const {
  std::string out;
  for (int32_t id : ids) {
    const std::string_view t = token(id);
    if (id == pad_ || id == cls_ || id == sep_) continue;
    if (t.starts_with(kContinuation) && t.size() > kContinuation.size()) {
      out += t.substr(kContinuation.size());
    } else {
      if (!out.empty()) out += ' ';
      out += t;
    }
  }
  return out;
}

WordPieceTokenizer::Encoding WordPieceTokenizer::encode_single(std::string_view a) const {
  Encoding e;
  e.ids = encode_example(a, std::numeric_limits<int64_t>::max());
  e.type_ids.assign(e.ids.size(), 0);
  return e;
}

WordPieceTokenizer::Encoding WordPieceTokenizer::encode_pair(std::string_view a,
                                                             std::string_view b) const {
  Encoding e = encode_single(a);
  const std::vector<int32_t> pieces = encode(b);
  e.ids.insert(e.ids.end(), pieces.begin(), pieces.end());
  e.ids.push_back(sep_);
  e.type_ids.resize(e.ids.size(), 1);
  return e;
}

nlohmann::json WordPieceTokenizer::to_json() const {
  return {{"kind", "wordpiece"},
          {"vocab", source_},
          {"lowercase", lowercase()},
          {"fingerprint", fmt::format("{:016x}", fingerprint_)},
          {"text", vocab_text_}};
}

std::unique_ptr<WordPieceTokenizer> WordPieceTokenizer::from_json(const nlohmann::json& j) {
  const std::string path = j.at("vocab").get<std::string>();
  const bool lowercase = j.at("lowercase").get<bool>();
  // Checkpoints written since vocabularies were embedded carry the file; older ones name it.
  auto tok = j.contains("text") ? std::make_unique<WordPieceTokenizer>(
                                      j.at("text").get<std::string>(), path, lowercase)
                                : load(path, lowercase);
  const std::string stored = j.at("fingerprint").get<std::string>();
  if (stored != fmt::format("{:016x}", tok->fingerprint_))
    fail_input(
        "WordPiece tokenizer: vocabulary {} differs from the one this checkpoint was trained "
        "with (fingerprint {} vs {:016x})",
        tok->source_, stored, tok->fingerprint_);
  return tok;
}

}  // namespace hwt
