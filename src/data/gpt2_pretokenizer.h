// GPT-2's pre-tokenisation: text cut into the pieces that byte-pair merges stay within, by the
// regex of OpenAI's GPT-2 encoder.py, run by PCRE2 (UTF-8 with Unicode properties, JIT-compiled).
// Pieces made of ASCII only are cut by a hand-written scanner that gives exactly the regex's
// pieces (tests/gpt2_pretokenizer_test.cpp compares the two); any piece whose extent depends on
// a byte outside ASCII goes to PCRE2.
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

  // Who cuts the pieces: the ASCII scanner with PCRE2 for the rest, or PCRE2 alone (to test
  // and time the scanner against).
  enum class Matcher { kAsciiScanner, kRegexOnly };

  // The pieces of one text in order; they tile it exactly. Bytes that are not valid UTF-8
  // match no part of the regex (PCRE2_MATCH_INVALID_UTF); each run of them is a piece of its
  // own, so any bytes round-trip. One Cursor per thread: it owns the match state.
  class Cursor {
   public:
    Cursor(const Gpt2Pretokenizer& p, std::string_view text,
           Matcher matcher = Matcher::kAsciiScanner);
    // The next piece; false at the end of the text.
    bool next(std::string_view& piece);

   private:
    // The end of the regex's piece at pos_ (an ASCII byte), or 0 when it depends on a byte
    // outside ASCII.
    size_t ascii_piece_end() const;
    void find_match();

    const Gpt2Pretokenizer& p_;
    std::string_view text_;
    bool scanner_;
    size_t pos_ = 0;
    bool has_match_ = false;                  // the regex's next match is known:
    size_t match_begin_ = 0, match_end_ = 0;  // the first one at or after pos_
    struct FreeMatchData {
      void operator()(pcre2_real_match_data_8* m) const;
    };
    std::unique_ptr<pcre2_real_match_data_8, FreeMatchData> match_;
  };

  // The first position at or after `from` where a piece starts whatever the text around it:
  // an ASCII whitespace byte after an ASCII byte that is not whitespace (no piece of the regex
  // holds a non-space followed by a space, and the regex looks only forward, so the text before
  // and after it cut apart give the whole text's pieces); text.size() when there is none.
  static size_t next_cut(std::string_view text, size_t from);

 private:
  struct FreeCode {
    void operator()(pcre2_real_code_8* c) const;
  };
  std::unique_ptr<pcre2_real_code_8, FreeCode> code_;
  bool jit_ = false;  // false where PCRE2 has no JIT for this CPU: the interpreter matches
};

}  // namespace hwt
