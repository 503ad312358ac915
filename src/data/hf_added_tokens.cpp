#include "data/hf_added_tokens.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <limits>

#include "core/error.h"
#include "data/hf_json.h"
#include "data/hf_normalizer.h"
#include "data/text_io.h"

namespace hwt {
namespace {

// The code point starting at s[i] and its length; an invalid byte is itself, length 1.
std::pair<uint32_t, size_t> code_point_at(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<uint32_t>(static_cast<unsigned char>(s[k])); };
  const size_t len = b(i) < 0x80 ? 1 : utf8_length(s, i);
  if (len <= 1) return {b(i), 1};
  uint32_t cp = b(i) & (0x7Fu >> len);
  for (size_t k = 1; k < len; ++k) cp = cp << 6 | (b(i + k) & 0x3F);
  return {cp, len};
}

// Whitespace at the end of `s` / at its start, in bytes.
size_t trailing_whitespace(std::string_view s) {
  size_t keep = s.size();
  for (size_t i = 0; i < s.size();) {
    const auto [cp, len] = code_point_at(s, i);
    i += len;
    if (!is_unicode_whitespace(cp)) keep = i;
  }
  return s.size() - keep;
}

size_t leading_whitespace(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto [cp, len] = code_point_at(s, i);
    if (!is_unicode_whitespace(cp)) break;
    i += len;
  }
  return i;
}

}  // namespace

bool is_unicode_whitespace(uint32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F ||
         cp == 0x205F || cp == 0x3000;
}

HfAddedTokens::HfAddedTokens(const nlohmann::json& j, const HfNormalizer& normalizer,
                             const std::string& file) {
  if (j.is_null()) return;
  if (!j.is_array()) fail_input("tokenizer.json {}: \"added_tokens\" is not a list", file);
  for (const nlohmann::json& t : j) {
    HfAddedToken a;
    a.content = hf_value<std::string>(t, "content", "", file, "added token");
    const int64_t id = hf_value<int64_t>(t, "id", -1, file, "added token");
    if (a.content.empty() || id < 0 || id >= std::numeric_limits<int32_t>::max())
      fail_input("tokenizer.json {}: an added token has no content or no valid id", file);
    a.id = static_cast<int32_t>(id);
    a.special = hf_value<bool>(t, "special", false, file, "added token");
    a.normalized = hf_value<bool>(t, "normalized", !a.special, file, "added token");
    a.lstrip = hf_value<bool>(t, "lstrip", false, file, "added token");
    a.rstrip = hf_value<bool>(t, "rstrip", false, file, "added token");
    if (hf_value<bool>(t, "single_word", false, file, "added token"))
      fail_unsupported(file, "added token option", "single_word: true (" + a.content + ")",
                       "single_word false");
    in_normalized_.push_back(a.normalized && !normalizer.empty());
    match_.push_back(in_normalized_.back() ? normalizer.apply(a.content) : a.content);
    tokens_.push_back(std::move(a));
  }
}

int32_t HfAddedTokens::special_id(std::string_view content) const {
  for (const HfAddedToken& t : tokens_)
    if (t.special && t.content == content) return t.id;
  return -1;
}

std::vector<HfAddedTokens::Section> HfAddedTokens::split(std::string_view text, bool normalized,
                                                         bool with_special) const {
  // Tokens matched here, longest first, so the first that matches at a position is the longest.
  std::vector<size_t> order;
  for (size_t k = 0; k < tokens_.size(); ++k) {
    const HfAddedToken& t = tokens_[k];
    if ((t.special && !with_special) || in_normalized_[k] != normalized || match_[k].empty())
      continue;
    order.push_back(k);
  }
  std::array<bool, 256> first{};  // bytes a match can start with
  for (size_t k : order) first[static_cast<unsigned char>(match_[k][0])] = true;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return match_[a].size() > match_[b].size(); });
  std::vector<Section> out;
  size_t start = 0;  // of the stretch before the next match
  for (size_t i = 0; i < text.size() && !order.empty();) {
    size_t hit = tokens_.size();
    if (first[static_cast<unsigned char>(text[i])])
      for (size_t k : order)
        if (text.compare(i, match_[k].size(), match_[k]) == 0) {
          hit = k;
          break;
        }
    if (hit == tokens_.size()) {
      ++i;
      continue;
    }
    const HfAddedToken& t = tokens_[hit];
    std::string_view before = text.substr(start, i - start);
    if (t.lstrip) before.remove_suffix(trailing_whitespace(before));
    if (!before.empty()) out.push_back({before, -1, start});
    out.push_back({text.substr(i, match_[hit].size()), t.id, i});
    i += match_[hit].size();
    if (t.rstrip) i += leading_whitespace(text.substr(i));
    start = i;
  }
  if (start < text.size()) out.push_back({text.substr(start), -1, start});
  return out;
}

}  // namespace hwt
