// BERT's basic tokenisation, the step before WordPiece: text cleaned, CJK ideographs made words
// of their own, optionally lowercased with accents stripped (uncased models), then split into
// words at whitespace and at each punctuation character. It gives the words Hugging Face
// tokenizers' BertNormalizer + BertPreTokenizer give (docs/data.md says where it may differ).
//
// Unicode categories, canonical decomposition (NFD) and lowercasing come from utf8proc; ASCII
// takes a table. Bytes that are not valid UTF-8 are dropped, as U+FFFD is.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hwt {

class BertBasicTokenizer {
 public:
  // lowercase: BERT's uncased models (NFD, nonspacing marks dropped, then lowercased); off:
  // cased models, where the text keeps its case and accents.
  explicit BertBasicTokenizer(bool lowercase) : lowercase_(lowercase) {}
  bool lowercase() const { return lowercase_; }

  // How a character (after normalisation) takes part in splitting.
  enum class Role : uint8_t { Drop, Space, Alone, Word };

  // The words of one text in order, as normalised UTF-8. One Cursor per thread.
  class Cursor {
   public:
    Cursor(const BertBasicTokenizer& t, std::string_view text) : t_(t), text_(text) {}
    // The next word and its length in code points; false at the end. `word` stays valid until
    // the next call.
    bool next(std::string_view& word, int64_t& chars);

   private:
    struct Char {
      char32_t cp;
      Role role;
    };
    const BertBasicTokenizer& t_;
    std::string_view text_;
    size_t pos_ = 0;
    // What one input character normalised to, not yet handed out (NFD can give several).
    Char queue_[32];
    int queue_len_ = 0, queue_at_ = 0;
    std::string word_;
  };

  // All words of `text` (tests and tools; encoding uses a Cursor).
  std::vector<std::string> words(std::string_view text) const;

  // The normalised characters of one non-ASCII code point (at most 32); returns how many.
  int normalize(char32_t cp, char32_t* out, Role* roles) const;

 private:
  bool lowercase_;
};

// BERT's CJK ideograph ranges (its "Chinese character" test).
bool is_bert_cjk(char32_t cp);

}  // namespace hwt
