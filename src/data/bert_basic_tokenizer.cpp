#include "data/bert_basic_tokenizer.h"

#include <utf8proc.h>

#include <array>

namespace hwt {
namespace {

using Role = BertBasicTokenizer::Role;

// ASCII: controls but \t \n \r are dropped, those three and space split words, and BERT counts
// 33-47, 58-64, 91-96 and 123-126 as punctuation (each one a word of its own).
constexpr std::array<Role, 128> kAscii = [] {
  std::array<Role, 128> r{};
  for (int c = 0; c < 128; ++c) {
    const bool punct = (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
                       (c >= 123 && c <= 126);
    r[static_cast<size_t>(c)] = c < 32 || c == 127 ? Role::Drop
                                : c == ' '         ? Role::Space
                                : punct            ? Role::Alone
                                                   : Role::Word;
  }
  r['\t'] = r['\n'] = r['\r'] = Role::Space;
  return r;
}();

char ascii_lower(unsigned char b) {
  return static_cast<char>(b >= 'A' && b <= 'Z' ? b + ('a' - 'A') : b);
}

bool is_punctuation(utf8proc_category_t c) {
  return c >= UTF8PROC_CATEGORY_PC && c <= UTF8PROC_CATEGORY_PO;
}

// Decodes the code point at s[pos] (not ASCII) and returns its length in bytes; a byte that
// does not start a valid sequence (overlong, surrogate, past U+10FFFF, cut short) is U+FFFD of
// length 1.
size_t decode_utf8(std::string_view s, size_t pos, char32_t& cp) {
  const auto at = [&](size_t i) { return static_cast<unsigned char>(s[pos + i]); };
  const size_t left = s.size() - pos;
  const unsigned char b0 = at(0);
  const auto cont = [&](size_t i, unsigned char lo, unsigned char hi) {
    return i < left && at(i) >= lo && at(i) <= hi;
  };
  cp = 0xFFFD;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    if (!cont(1, 0x80, 0xBF)) return 1;
    cp = (char32_t{b0} & 0x1F) << 6 | (at(1) & 0x3F);
    return 2;
  }
  if (b0 >= 0xE0 && b0 <= 0xEF) {
    const unsigned char lo = b0 == 0xE0 ? 0xA0 : 0x80, hi = b0 == 0xED ? 0x9F : 0xBF;
    if (!cont(1, lo, hi) || !cont(2, 0x80, 0xBF)) return 1;
    cp = (char32_t{b0} & 0x0F) << 12 | char32_t{at(1) & 0x3Fu} << 6 | (at(2) & 0x3F);
    return 3;
  }
  if (b0 >= 0xF0 && b0 <= 0xF4) {
    const unsigned char lo = b0 == 0xF0 ? 0x90 : 0x80, hi = b0 == 0xF4 ? 0x8F : 0xBF;
    if (!cont(1, lo, hi) || !cont(2, 0x80, 0xBF) || !cont(3, 0x80, 0xBF)) return 1;
    cp = (char32_t{b0} & 0x07) << 18 | char32_t{at(1) & 0x3Fu} << 12 |
         char32_t{at(2) & 0x3Fu} << 6 | (at(3) & 0x3F);
    return 4;
  }
  return 1;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace

bool is_bert_cjk(char32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
         (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

int BertBasicTokenizer::normalize(char32_t cp, char32_t* out, Role* roles) const {
  if (cp < 0x80) {
    out[0] = lowercase_ ? static_cast<char32_t>(ascii_lower(static_cast<unsigned char>(cp))) : cp;
    roles[0] = kAscii[cp];
    return roles[0] == Role::Drop ? 0 : 1;
  }
  if (cp == 0xFFFD) return 0;
  const auto cp32 = static_cast<utf8proc_int32_t>(cp);
  const utf8proc_category_t cat = utf8proc_category(cp32);
  switch (cat) {
    // Control, format and private-use characters go; unassigned ones (Cn) stay, as in Hugging
    // Face tokenizers (Google's BERT drops them too).
    case UTF8PROC_CATEGORY_CC:
    case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_CO:
    case UTF8PROC_CATEGORY_CS:
      return 0;
    case UTF8PROC_CATEGORY_ZS:
    case UTF8PROC_CATEGORY_ZL:
    case UTF8PROC_CATEGORY_ZP:
      out[0] = ' ';
      roles[0] = Role::Space;
      return 1;
    default:
      break;
  }
  // CJK is tested before NFD: a compatibility ideograph decomposes to a unified one, alone too.
  const bool cjk = is_bert_cjk(cp);
  if (!lowercase_) {
    out[0] = cp;
    roles[0] = cjk || is_punctuation(cat) ? Role::Alone : Role::Word;
    return 1;
  }
  utf8proc_int32_t d[32];
  utf8proc_ssize_t n = utf8proc_decompose_char(cp32, d, 32, UTF8PROC_DECOMPOSE, nullptr);
  if (n < 1 || n > 32) {
    d[0] = cp32;
    n = 1;
  }
  int k = 0;
  for (utf8proc_ssize_t i = 0; i < n; ++i) {
    if (utf8proc_category(d[i]) == UTF8PROC_CATEGORY_MN) continue;  // the stripped accents
    const auto c = static_cast<char32_t>(utf8proc_tolower(d[i]));
    out[k] = c;
    // A decomposition may give punctuation (U+1FEF GREEK VARIA is "`"), split as such.
    roles[k] = cjk                                                                   ? Role::Alone
               : c < 0x80                                                            ? kAscii[c]
               : is_punctuation(utf8proc_category(static_cast<utf8proc_int32_t>(c))) ? Role::Alone
                                                                                     : Role::Word;
    ++k;
  }
  return k;
}

bool BertBasicTokenizer::Cursor::next(std::string_view& word, int64_t& chars) {
  word_.clear();
  chars = 0;
  const bool lower = t_.lowercase_;
  const auto done = [&] {
    word = word_;
    return chars > 0;
  };
  for (;;) {
    if (queue_at_ == queue_len_) {
      // ASCII fast path: bytes straight from the text, no decoding.
      while (pos_ < text_.size()) {
        const auto b = static_cast<unsigned char>(text_[pos_]);
        if (b >= 0x80) break;
        switch (kAscii[b]) {
          case Role::Word:
            word_ += lower ? ascii_lower(b) : static_cast<char>(b);
            ++chars;
            ++pos_;
            break;
          case Role::Drop:
            ++pos_;
            break;
          case Role::Space:
            ++pos_;
            if (chars > 0) return done();
            break;
          case Role::Alone:
            if (chars > 0) return done();  // the punctuation is the next word
            word_ += static_cast<char>(b);
            chars = 1;
            ++pos_;
            return done();
        }
      }
      if (pos_ >= text_.size()) return done();
      char32_t cp;
      pos_ += decode_utf8(text_, pos_, cp);
      char32_t cps[32];
      Role roles[32];
      queue_len_ = t_.normalize(cp, cps, roles);
      for (int i = 0; i < queue_len_; ++i) queue_[i] = {cps[i], roles[i]};
      queue_at_ = 0;
      continue;
    }
    const Char c = queue_[queue_at_];
    switch (c.role) {
      case Role::Drop:
        ++queue_at_;
        break;
      case Role::Space:
        ++queue_at_;
        if (chars > 0) return done();
        break;
      case Role::Alone:
        if (chars > 0) return done();
        ++queue_at_;
        append_utf8(word_, c.cp);
        chars = 1;
        return done();
      case Role::Word:
        ++queue_at_;
        append_utf8(word_, c.cp);
        ++chars;
        break;
    }
  }
}

std::vector<std::string> BertBasicTokenizer::words(std::string_view text) const {
  std::vector<std::string> out;
  Cursor cursor(*this, text);
  std::string_view word;
  int64_t chars = 0;
  while (cursor.next(word, chars)) out.emplace_back(word);
  return out;
}

}  // namespace hwt
