#include "data/tokenizer.h"

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "data/char_tokenizer.h"
#include "data/gpt2_tokenizer.h"
#include "data/word_tokenizer.h"

namespace hwt {

std::unique_ptr<Tokenizer> Tokenizer::from_json(const nlohmann::json& j) {
  try {
    if (!j.is_object()) fail_input("tokenizer JSON: expected an object");
    const std::string kind = j.at("kind").get<std::string>();
    if (kind == "word") return WordTokenizer::from_json(j);
    if (kind == "char") return CharTokenizer::from_json(j);
    if (kind == "gpt2") return Gpt2Tokenizer::from_json(j);
    fail_input("tokenizer JSON: unknown kind '{}' (expected word, char or gpt2)", kind);
  } catch (const nlohmann::json::exception& e) {
    fail_input("tokenizer JSON: {}", e.what());
  }
}

std::unique_ptr<Tokenizer> train_tokenizer(const DataConfig& c,
                                           const std::vector<std::string_view>& texts) {
  if (c.tokenizer == TokenizerKind::Char) return CharTokenizer::train(texts);
  if (c.tokenizer == TokenizerKind::Gpt2) return Gpt2Tokenizer::load_installed(false);
  WordTokenizerOptions o;
  o.split = c.format == DataFormat::JointBert ? WordSplit::Whitespace : WordSplit::Words;
  o.lowercase = c.lowercase;
  o.min_freq = c.min_freq;
  o.max_vocab = c.max_vocab;
  // Examples keep data.max_len - 1 tokens after [CLS]; an LM keeps its whole stream.
  if (c.format != DataFormat::Text) o.max_pieces = c.max_len - 1;
  return WordTokenizer::train(texts, o);
}

std::unique_ptr<Tokenizer> pretrained_tokenizer(std::string_view name, bool special_in_text) {
  if (name == "gpt2") return Gpt2Tokenizer::load_installed(special_in_text);
  fail_input("unknown tokenizer '{}' (expected gpt2)", name);
}

}  // namespace hwt
