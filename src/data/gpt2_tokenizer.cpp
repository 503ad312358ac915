#include "data/gpt2_tokenizer.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include "core/error.h"

namespace hwt {

Gpt2Tokenizer::Gpt2Tokenizer(const Gpt2Vocabulary& vocabulary, bool special_in_text)
    : token_bytes_(vocabulary.token_bytes),
      bpe_(vocabulary.byte_ids, vocabulary.merges, std::ssize(vocabulary.token_bytes)),
      fingerprint_(vocabulary.fingerprint),
      special_in_text_(special_in_text) {
  if (std::ssize(token_bytes_) != kVocabSize ||
      token_bytes_[static_cast<size_t>(kEndOfText)] != kEndOfTextText)
    fail_input("GPT-2 vocabulary: expected {} tokens with {} last, got {} tokens", kVocabSize,
               kEndOfTextText, token_bytes_.size());
}

std::unique_ptr<Gpt2Tokenizer> Gpt2Tokenizer::load_installed(bool special_in_text) {
  return std::make_unique<Gpt2Tokenizer>(read_installed_gpt2_vocabulary(), special_in_text);
}

void Gpt2Tokenizer::encode_ordinary(std::string_view text, int64_t max_tokens, PieceCache& cache,
                                    std::vector<int32_t>& out) const {
  Gpt2Pretokenizer::Cursor cursor(pretokenizer_, text);
  std::string_view piece;
  while (std::ssize(out) < max_tokens && cursor.next(piece)) {
    if (cache.append(piece, out)) continue;
    const size_t first = out.size();
    bpe_.encode(piece, out);
    cache.add(piece, out.data() + first, out.size() - first);
  }
}

std::vector<int32_t> Gpt2Tokenizer::encode_prefix(std::string_view text, int64_t max_tokens) const {
  std::vector<int32_t> ids;
  ids.reserve(
      std::min(text.size() / 3 + 16, static_cast<size_t>(std::max<int64_t>(0, max_tokens))));
  const PieceCachePool::Lease lease = caches_.lease();
  while (std::ssize(ids) < max_tokens) {
    const size_t special = special_in_text_ ? text.find(kEndOfTextText) : std::string_view::npos;
    encode_ordinary(text.substr(0, special), max_tokens, lease.cache(), ids);
    if (special == std::string_view::npos || std::ssize(ids) >= max_tokens) break;
    ids.push_back(kEndOfText);
    text.remove_prefix(special + kEndOfTextText.size());
  }
  if (std::ssize(ids) > max_tokens) ids.resize(static_cast<size_t>(max_tokens));
  return ids;
}

std::vector<std::string_view> Gpt2Tokenizer::independent_parts(std::string_view text,
                                                               size_t parts) const {
  const size_t max_parts = std::clamp<size_t>(text.size() / kMinPartBytes, 1, parts);
  std::vector<std::string_view> out;
  size_t begin = 0;
  for (size_t k = 1; k <= max_parts && begin < text.size(); ++k) {
    const size_t end = k == max_parts ? text.size()
                                      : Gpt2Pretokenizer::next_cut(
                                            text, std::max(begin + 1, k * text.size() / max_parts));
    out.push_back(text.substr(begin, end - begin));
    begin = end;
  }
  if (out.empty()) out.push_back(text);
  return out;
}

std::string Gpt2Tokenizer::decode(const std::vector<int32_t>& ids) const {
  std::string out;
  for (int32_t id : ids) {
    HWT_CHECK(id >= 0 && id < kVocabSize, "token id {} outside vocabulary of {}", id, kVocabSize);
    out += token_bytes_[static_cast<size_t>(id)];
  }
  return out;
}

nlohmann::json Gpt2Tokenizer::to_json() const {
  return {{"kind", "gpt2"},
          {"special_in_text", special_in_text_},
          {"fingerprint", fmt::format("{:016x}", fingerprint_)}};
}

std::unique_ptr<Gpt2Tokenizer> Gpt2Tokenizer::from_json(const nlohmann::json& j) {
  auto tok = load_installed(j.at("special_in_text").get<bool>());
  const std::string stored = j.at("fingerprint").get<std::string>();
  if (stored != fmt::format("{:016x}", tok->fingerprint_))
    fail_input(
        "GPT-2 tokenizer: the installed vocabulary files differ from the ones this "
        "checkpoint was trained with (fingerprint {} vs {:016x})",
        stored, tok->fingerprint_);
  return tok;
}

}  // namespace hwt
