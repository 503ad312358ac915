// A Hugging Face tokenizer.json "pre_tokenizer": cuts each stretch of normalised text into the
// pieces BPE merges stay within. The steps real files use: ByteLevel (GPT-2's regex, run by
// Gpt2Pretokenizer), Split with a regex (Llama 3, Qwen2), Digits (SmolLM), Metaspace (Llama 2
// and Mistral as newer converters write them) and Sequence of those.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "data/gpt2_pretokenizer.h"
#include "data/hf_regex.h"

namespace hwt {

class HfPreTokenizer {
 public:
  // From the "pre_tokenizer" value (null: none, a stretch is one piece). InputError naming
  // `file` for a type, behaviour or option hwt does not implement.
  HfPreTokenizer(const nlohmann::json& j, const std::string& file);

  // Appends the pieces of `text`; `at_text_start`: it begins the whole text (Metaspace's
  // prepend_scheme "first").
  void split(std::string_view text, bool at_text_start, std::vector<std::string>& pieces) const;
  // Whether a ByteLevel step ends the chain: the model then merges bytes, not characters.
  bool byte_level() const { return byte_level_; }

  // How a Split keeps its matches (tokenizers' SplitDelimiterBehavior).
  enum class Behavior { Isolated, Removed, MergedWithPrevious, MergedWithNext, Contiguous };

 private:
  enum class Kind { Split, Metaspace, ByteLevel };
  enum class Prepend { Always, First, Never };
  struct Step {
    Kind kind;
    std::shared_ptr<const HfRegex> regex;  // Split; Metaspace with split
    Behavior behavior = Behavior::Isolated;
    bool invert = false;
    std::string replacement;  // Metaspace
    Prepend prepend = Prepend::Always;
    bool add_prefix_space = false;  // ByteLevel
    bool use_regex = false;         // ByteLevel
  };
  void add(const nlohmann::json& j, const std::string& file);
  void apply(const Step& step, std::string_view piece, bool at_text_start,
             std::vector<std::string>& out) const;

  std::vector<Step> steps_;
  std::shared_ptr<const Gpt2Pretokenizer> gpt2_;  // ByteLevel's regex, when a step uses it
  bool byte_level_ = false;
};

}  // namespace hwt
