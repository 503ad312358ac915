#include "data/tokenizer.h"

#include <nlohmann/json.hpp>

#include <algorithm>

#include "core/error.h"
#include "data/char_tokenizer.h"
#include "data/gpt2_tokenizer.h"
#include "data/hf_tokenizer.h"
#include "data/word_tokenizer.h"
#include "data/wordpiece_tokenizer.h"

namespace hwt {

std::vector<int32_t> Tokenizer::encode_example(std::string_view text, int64_t max_len) const {
  const int32_t sep = sep_id();
  const int64_t room = std::max<int64_t>(0, max_len - 1 - (sep >= 0 ? 1 : 0));
  std::vector<int32_t> ids{cls_id()};
  const std::vector<int32_t> tokens = encode_prefix(text, room);
  ids.insert(ids.end(), tokens.begin(), tokens.end());
  if (sep >= 0) ids.push_back(sep);
  return ids;
}

std::unique_ptr<Tokenizer> Tokenizer::from_json(const nlohmann::json& j) {
  try {
    if (!j.is_object()) fail_input("tokenizer JSON: expected an object");
    const std::string kind = j.at("kind").get<std::string>();
    if (kind == "word") return WordTokenizer::from_json(j);
    if (kind == "char") return CharTokenizer::from_json(j);
    if (kind == "gpt2") return Gpt2Tokenizer::from_json(j);
    if (kind == "wordpiece") return WordPieceTokenizer::from_json(j);
    if (kind == "hf") return HfTokenizer::from_json(j);
    fail_input("tokenizer JSON: unknown kind '{}' (expected word, char, gpt2, wordpiece or hf)",
               kind);
  } catch (const nlohmann::json::exception& e) {
    fail_input("tokenizer JSON: {}", e.what());
  }
}

std::unique_ptr<Tokenizer> train_tokenizer(const DataConfig& c,
                                           const std::vector<std::string_view>& texts) {
  if (c.tokenizer == TokenizerKind::Char) return CharTokenizer::train(texts);
  if (c.tokenizer == TokenizerKind::Gpt2) return Gpt2Tokenizer::load_installed(false);
  if (c.tokenizer == TokenizerKind::WordPiece) {
    if (c.vocab.empty())
      fail_input("config data.tokenizer=\"wordpiece\" needs data.vocab (BERT's vocab.txt)");
    return WordPieceTokenizer::load(c.vocab, c.lowercase);
  }
  if (c.tokenizer == TokenizerKind::Hf) {
    if (c.vocab.empty())
      fail_input("config data.tokenizer=\"hf\" needs data.vocab (a tokenizer.json)");
    return HfTokenizer::load(c.vocab, false);
  }
  WordTokenizerOptions o;
  o.split = c.format == DataFormat::JointBert ? WordSplit::Whitespace : WordSplit::Words;
  o.lowercase = c.lowercase;
  o.min_freq = c.min_freq;
  o.max_vocab = c.max_vocab;
  // Examples keep data.max_len - 1 tokens after [CLS]; an LM keeps its whole stream.
  if (!is_lm_format(c.format)) o.max_pieces = c.max_len - 1;
  return WordTokenizer::train(texts, o);
}

std::unique_ptr<Tokenizer> train_tokenizer(const DataConfig& c,
                                           const std::vector<std::string_view>& texts,
                                           const nlohmann::json* given) {
  return given ? Tokenizer::from_json(*given) : train_tokenizer(c, texts);
}

std::unique_ptr<Tokenizer> pretrained_tokenizer(std::string_view name,
                                                const PretrainedTokenizerOptions& o) {
  if (name == "gpt2") {
    if (!o.vocab.empty())
      fail_input(
          "a vocab file is for the wordpiece and hf tokenizers; gpt2 uses its installed files");
    return Gpt2Tokenizer::load_installed(o.special_in_text);
  }
  if (name == "wordpiece") {
    if (o.vocab.empty()) fail_input("the wordpiece tokenizer needs a vocab file (--vocab FILE)");
    return WordPieceTokenizer::load(o.vocab, o.lowercase);
  }
  if (name == "hf") {
    if (o.vocab.empty()) fail_input("the hf tokenizer needs a tokenizer.json (--vocab FILE)");
    return HfTokenizer::load(o.vocab, o.special_in_text);
  }
  fail_input("unknown tokenizer '{}' (expected gpt2, wordpiece or hf)", name);
}

}  // namespace hwt
