// The "added_tokens" of a Hugging Face tokenizer.json: strings matched whole in the text before
// pre-tokenisation, as tokenizers does: those with "normalized": false in the raw text, the
// others in the normalised text (matched as the normaliser writes them); leftmost, then longest
// first. "lstrip"/"rstrip" take the whitespace before/after a match with it.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hwt {

class HfNormalizer;

struct HfAddedToken {
  std::string content;
  int32_t id = -1;
  bool special = false, normalized = false, lstrip = false, rstrip = false;
};

class HfAddedTokens {
 public:
  // InputError naming `file` for a malformed entry or "single_word": true, which hwt does not
  // implement.
  HfAddedTokens(const nlohmann::json& j, const HfNormalizer& normalizer, const std::string& file);

  // A stretch of text between matches (id < 0), or one matched token (id >= 0); `offset`: where
  // it starts in the text.
  struct Section {
    std::string_view text;
    int32_t id = -1;
    size_t offset = 0;
  };
  // `text` cut at the tokens matched in raw (normalized = false) or in normalised text; special
  // tokens only with `with_special`. Empty stretches are left out.
  std::vector<Section> split(std::string_view text, bool normalized, bool with_special) const;

  const std::vector<HfAddedToken>& tokens() const { return tokens_; }
  // The id of the special token with this content, -1 when there is none.
  int32_t special_id(std::string_view content) const;

 private:
  std::vector<HfAddedToken> tokens_;
  std::vector<std::string> match_;   // per token: the string matched (normalised when normalized)
  std::vector<bool> in_normalized_;  // per token: matched in normalised text
};

// Whether the code point is Unicode White_Space (Rust's char::is_whitespace, which lstrip and
// rstrip use).
bool is_unicode_whitespace(uint32_t cp);

}  // namespace hwt
