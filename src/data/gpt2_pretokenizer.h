// GPT-2's pre-tokenisation: text cut into the pieces that byte-pair merges stay within, by the
// regex of OpenAI's GPT-2 encoder.py, run by PCRE2 (UTF-8 with Unicode properties, JIT-compiled).
#pragma once

#include <memory>
#include <string_view>

// PCRE2's compiled pattern and match data (pcre2.h, 8-bit code units).
struct pcre2_real_code_8;
struct pcre2_real_match_data_8;

namespace hwt {

class Gpt2Pretokenizer {
 public:
  Gpt2Pretokenizer();

  // The pieces of one text in order; they tile it exactly. Bytes that are not valid UTF-8
  // match no part of the regex (PCRE2_MATCH_INVALID_UTF); each run of them is a piece of its
  // own, so any bytes round-trip. One Cursor per thread: it owns the match state.
  class Cursor {
   public:
    Cursor(const Gpt2Pretokenizer& p, std::string_view text);
    // The next piece; false at the end of the text.
    bool next(std::string_view& piece);

   private:
    const Gpt2Pretokenizer& p_;
    std::string_view text_;
    size_t pos_ = 0;
    size_t match_begin_ = 0, match_end_ = 0;  // the regex's next match at or after pos_
    struct FreeMatchData {
      void operator()(pcre2_real_match_data_8* m) const;
    };
    std::unique_ptr<pcre2_real_match_data_8, FreeMatchData> match_;
    void find_match();
  };

 private:
  struct FreeCode {
    void operator()(pcre2_real_code_8* c) const;
  };
  std::unique_ptr<pcre2_real_code_8, FreeCode> code_;
  bool jit_ = false;  // false where PCRE2 has no JIT for this CPU: the interpreter matches
};

}  // namespace hwt
