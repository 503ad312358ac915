#include "data/char_tokenizer.h"

#include <nlohmann/json.hpp>

#include <algorithm>

#include "core/error.h"
#include "data/text_io.h"

namespace hwt {

std::unique_ptr<CharTokenizer> CharTokenizer::train(const std::vector<std::string_view>& texts) {
  std::array<bool, 256> seen{};
  for (std::string_view text : texts)
    for (char c : text) seen[static_cast<unsigned char>(c)] = true;
  std::vector<uint8_t> bytes;
  for (int b = 0; b < 256; ++b)
    if (seen[static_cast<size_t>(b)]) bytes.push_back(static_cast<uint8_t>(b));
  return std::make_unique<CharTokenizer>(std::move(bytes));
}

CharTokenizer::CharTokenizer(std::vector<uint8_t> bytes) : bytes_(std::move(bytes)) {
  ids_.fill(kUnk);
  for (size_t i = 0; i < bytes_.size(); ++i) {
    if (i > 0 && bytes_[i] <= bytes_[i - 1])
      fail_input("char tokenizer: bytes must be strictly increasing (index {})", i);
    ids_[bytes_[i]] = static_cast<int32_t>(kNumSpecial + i);
  }
}

std::vector<int32_t> CharTokenizer::encode_prefix(std::string_view text, int64_t max_tokens) const {
  const auto known = [&](char c) { return ids_[static_cast<unsigned char>(c)] != kUnk; };
  std::vector<int32_t> ids;
  ids.reserve(std::min(text.size(), static_cast<size_t>(std::max<int64_t>(0, max_tokens))));
  for (size_t i = 0; i < text.size() && std::ssize(ids) < max_tokens;) {
    // A character of several bytes that are not all in the vocabulary is one [UNK], as an
    // unknown word is one in a word tokenizer.
    const size_t len = utf8_length(text, i);
    const std::string_view ch = text.substr(i, len);
    if (len > 1 && !std::all_of(ch.begin(), ch.end(), known)) {
      ids.push_back(kUnk);
      i += len;
    } else {
      ids.push_back(ids_[static_cast<unsigned char>(text[i])]);
      ++i;
    }
  }
  return ids;
}

std::string CharTokenizer::decode(const std::vector<int32_t>& ids) const {
  std::string out;
  out.reserve(ids.size());
  for (int32_t id : ids) {
    HWT_CHECK(id >= 0 && id < vocab_size(), "token id {} outside vocabulary of {}", id,
              vocab_size());
    if (id == kUnk) out += "[UNK]";
    if (id >= kNumSpecial) out += static_cast<char>(bytes_[static_cast<size_t>(id - kNumSpecial)]);
  }
  return out;
}

// Bytes are stored as numbers: single bytes >= 0x80 are not valid UTF-8 JSON strings.
nlohmann::json CharTokenizer::to_json() const {
  return {{"kind", "char"}, {"bytes", bytes_}};
}

std::unique_ptr<CharTokenizer> CharTokenizer::from_json(const nlohmann::json& j) {
  std::vector<uint8_t> bytes;
  for (const int b : j.at("bytes").get<std::vector<int>>()) {
    if (b < 0 || b > 255) fail_input("char tokenizer: byte {} outside 0..255", b);
    bytes.push_back(static_cast<uint8_t>(b));
  }
  return std::make_unique<CharTokenizer>(std::move(bytes));
}

}  // namespace hwt
