// The "decoder" of a Hugging Face tokenizer.json: token strings back to text. The steps real
// files use: ByteLevel (GPT-2, Llama 3, Qwen2), Replace (String), ByteFallback, Fuse, Strip
// (Llama 2, Mistral), Metaspace, and Sequence of those; null joins the tokens with spaces, as
// tokenizers does. Text comes out as bytes: byte tokens that are not valid UTF-8 stay the bytes
// they are (tokenizers writes U+FFFD for them).
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <vector>

namespace hwt {

class HfDecoder {
 public:
  // InputError naming `file` for a type or option hwt does not implement.
  HfDecoder(const nlohmann::json& j, const std::string& file);

  struct Token {
    std::string text;
    bool added = false;  // an added token: ByteLevel leaves its text as it is
  };
  std::string decode(std::vector<Token> tokens) const;

 private:
  enum class Kind { ByteLevel, Replace, ByteFallback, Fuse, Strip, Metaspace };
  struct Step {
    Kind kind;
    std::string from, to;            // Replace: from -> to; Strip: to is the stripped character;
                                     // Metaspace: from is the replacement
    size_t start = 0, stop = 0;      // Strip
    bool strip_first_space = false;  // Metaspace: prepend_scheme other than "never"
  };
  void add(const nlohmann::json& j, const std::string& file);
  static void apply(const Step& step, std::vector<Token>& tokens);

  std::vector<Step> steps_;
  bool join_with_spaces_ = false;  // no decoder in the file
};

}  // namespace hwt
