// A pattern of a Hugging Face tokenizer.json (a Split pre-tokenizer's Regex or String), run by
// PCRE2 on UTF-8 with Unicode properties (\p{L}, Unicode \s), JIT-compiled where PCRE2 can.
// tokenizers compiles such patterns with Oniguruma; the patterns real files carry (GPT-2's,
// Llama 3's, Qwen2's) mean the same in PCRE2.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// PCRE2's compiled pattern (pcre2.h, 8-bit code units).
struct pcre2_real_code_8;

namespace hwt {

class HfRegex {
 public:
  // `literal`: the pattern is a plain string. InputError naming `where` when it does not compile.
  HfRegex(std::string_view pattern, bool literal, const std::string& where);

  // The [begin, end) byte ranges of the matches in `text`, left to right, empty ones left out.
  // Bytes that are not valid UTF-8 are never inside a match (PCRE2_MATCH_INVALID_UTF).
  std::vector<std::pair<size_t, size_t>> matches(std::string_view text) const;

 private:
  struct FreeCode {
    void operator()(pcre2_real_code_8* c) const;
  };
  std::unique_ptr<pcre2_real_code_8, FreeCode> code_;
  bool jit_ = false;
};

}  // namespace hwt
