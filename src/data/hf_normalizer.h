// A Hugging Face tokenizer.json "normalizer": the steps real files use (Llama 2's Prepend("▁")
// and Replace(" ", "▁"), Qwen2's NFC), run in order on each stretch of text between added
// tokens.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace hwt {

class HfNormalizer {
 public:
  // From the "normalizer" value (null: none). InputError naming `file` for a type or option hwt
  // does not implement.
  HfNormalizer(const nlohmann::json& j, const std::string& file);

  bool empty() const { return steps_.empty(); }
  std::string apply(std::string_view text) const;

 private:
  enum class Kind { Prepend, Replace, Unicode };
  struct Step {
    Kind kind;
    std::string text, content;  // Prepend: text; Replace: text -> content
    int unicode_options = 0;    // Unicode: utf8proc's options for NFC, NFD, NFKC or NFKD
  };
  void add(const nlohmann::json& j, const std::string& file);

  std::vector<Step> steps_;
};

// Every occurrence of `from` (not empty) in `text` replaced by `to`, left to right.
std::string replace_all(std::string_view text, std::string_view from, std::string_view to);

// The string of a Replace or Split "pattern" ({"String": ...}); InputError for a {"Regex": ...},
// which hwt does not run there.
std::string hf_string_pattern(const nlohmann::json& pattern, const std::string& file,
                              std::string_view part);

}  // namespace hwt
