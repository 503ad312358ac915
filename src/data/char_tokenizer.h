// Byte-level tokenizer: one token per byte of text seen in training (multi-byte UTF-8 characters
// become several tokens, so any input of seen bytes round-trips); a character with an unseen
// byte is one [UNK].
#pragma once

#include <array>

#include "data/tokenizer.h"

namespace hwt {

class CharTokenizer final : public Tokenizer {
 public:
  // Vocabulary: every byte that occurs in `texts`, in byte order, after the specials.
  static std::unique_ptr<CharTokenizer> train(const std::vector<std::string_view>& texts);
  // InputError unless `bytes` is strictly increasing.
  explicit CharTokenizer(std::vector<uint8_t> bytes);

  int64_t vocab_size() const override { return kNumSpecial + std::ssize(bytes_); }
  std::vector<int32_t> encode_prefix(std::string_view text, int64_t max_tokens) const override;
  std::string decode(const std::vector<int32_t>& ids) const override;
  nlohmann::json to_json() const override;
  static std::unique_ptr<CharTokenizer> from_json(const nlohmann::json& j);

 private:
  std::vector<uint8_t> bytes_;
  std::array<int32_t, 256> ids_;  // byte -> id, kUnk when unseen
};

}  // namespace hwt
