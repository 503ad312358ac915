#include "data/gpt2_pretokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <array>
#include <string>

#include "core/error.h"

namespace hwt {
namespace {

// encoder.py's pattern. PCRE2_UCP makes \s Unicode-aware, as Python's regex module is.
constexpr std::string_view kPattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

std::string pcre2_message(int code) {
  std::array<PCRE2_UCHAR, 256> buf{};
  pcre2_get_error_message(code, buf.data(), buf.size());
  return reinterpret_cast<const char*>(buf.data());
}

// The classes the regex sees in an ASCII byte (PCRE2 with PCRE2_UCP: \s is tab, newline,
// vertical tab, form feed, carriage return and space; \p{L} the 52 letters; \p{N} the digits);
// every other ASCII byte is "other" ([^\s\p{L}\p{N}]). kNonAscii: a byte the scanner leaves
// to PCRE2.
enum CharClass : unsigned char { kOther, kLetter, kNumber, kSpace, kNonAscii };

constexpr std::array<CharClass, 256> make_classes() {
  std::array<CharClass, 256> c{};
  for (int b = 0; b < 256; ++b) {
    CharClass k = kOther;
    if (b >= 0x80)
      k = kNonAscii;
    else if ((b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z'))
      k = kLetter;
    else if (b >= '0' && b <= '9')
      k = kNumber;
    else if (b == ' ' || (b >= '\t' && b <= '\r'))
      k = kSpace;
    c[static_cast<size_t>(b)] = k;
  }
  return c;
}
constexpr std::array<CharClass, 256> kClasses = make_classes();

CharClass class_of(char c) {
  return kClasses[static_cast<unsigned char>(c)];
}

}  // namespace

void Gpt2Pretokenizer::FreeCode::operator()(pcre2_code* c) const {
  pcre2_code_free(c);
}

void Gpt2Pretokenizer::Cursor::FreeMatchData::operator()(pcre2_match_data* m) const {
  pcre2_match_data_free(m);
}

Gpt2Pretokenizer::Gpt2Pretokenizer() {
  int error = 0;
  PCRE2_SIZE offset = 0;
  code_.reset(pcre2_compile(reinterpret_cast<PCRE2_SPTR>(kPattern.data()), kPattern.size(),
                            PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &error, &offset,
                            nullptr));
  HWT_CHECK(code_ != nullptr, "GPT-2 regex does not compile at {}: {}", offset,
            pcre2_message(error));
  jit_ = pcre2_jit_compile(code_.get(), PCRE2_JIT_COMPLETE) == 0;
}

Gpt2Pretokenizer::Cursor::Cursor(const Gpt2Pretokenizer& p, std::string_view text, Matcher matcher)
    : p_(p), text_(text), scanner_(matcher == Matcher::kAsciiScanner) {}

size_t Gpt2Pretokenizer::Cursor::ascii_piece_end() const {
  const size_t n = text_.size();
  // The end of the run of `k` from i, or 0 when a byte outside ASCII could continue it.
  const auto run_end = [&](size_t i, CharClass k) -> size_t {
    while (i < n && class_of(text_[i]) == k) ++i;
    return i < n && class_of(text_[i]) == kNonAscii ? 0 : i;
  };
  const size_t pos = pos_;
  const char c = text_[pos];
  if (c == '\'' && pos + 1 < n) {  // 's|'t|'re|'ve|'m|'ll|'d, tried first
    const char d = text_[pos + 1];
    if (d == 's' || d == 't' || d == 'm' || d == 'd') return pos + 2;
    if (pos + 2 < n) {
      const char e = text_[pos + 2];
      if ((d == 'r' && e == 'e') || (d == 'v' && e == 'e') || (d == 'l' && e == 'l'))
        return pos + 3;
    }
  }
  const CharClass k = class_of(c);
  if (c == ' ' && pos + 1 < n) {  // " ?" joins a space to the letters, digits or others after
    const CharClass next = class_of(text_[pos + 1]);
    if (next == kNonAscii) return 0;
    if (next != kSpace) return run_end(pos + 1, next);
  }
  if (k != kSpace) return run_end(pos, k);
  // \s+(?!\S)|\s+ : a run of spaces up to the end, or all but its last before a non-space
  // (which then starts the next piece, " ?" taking a space), or a single one.
  const size_t end = run_end(pos, kSpace);
  if (end == 0 || end == n) return end;
  return end - pos >= 2 ? end - 1 : end;
}

void Gpt2Pretokenizer::Cursor::find_match() {
  if (match_ == nullptr) {
    match_.reset(pcre2_match_data_create_from_pattern(p_.code_.get(), nullptr));
    HWT_CHECK(match_ != nullptr, "out of memory for PCRE2 match data");
  }
  const auto subject = reinterpret_cast<PCRE2_SPTR>(text_.data());
  const int rc =
      p_.jit_
          ? pcre2_jit_match(p_.code_.get(), subject, text_.size(), pos_, 0, match_.get(), nullptr)
          : pcre2_match(p_.code_.get(), subject, text_.size(), pos_, 0, match_.get(), nullptr);
  has_match_ = true;
  if (rc == PCRE2_ERROR_NOMATCH) {
    match_begin_ = match_end_ = text_.size();
    return;
  }
  HWT_CHECK(rc > 0, "PCRE2 match failed: {}", pcre2_message(rc));
  const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match_.get());
  match_begin_ = ovector[0];
  match_end_ = ovector[1];
  HWT_CHECK(match_end_ > match_begin_, "GPT-2 regex matched nothing at {}", match_begin_);
}

bool Gpt2Pretokenizer::Cursor::next(std::string_view& piece) {
  if (pos_ >= text_.size()) return false;
  if (!has_match_) {
    if (scanner_ && class_of(text_[pos_]) != kNonAscii) {
      if (const size_t end = ascii_piece_end(); end != 0) {
        piece = text_.substr(pos_, end - pos_);
        pos_ = end;
        return true;
      }
    }
    find_match();
  }
  if (pos_ < match_begin_) {  // invalid UTF-8 before the next match
    piece = text_.substr(pos_, match_begin_ - pos_);
    pos_ = match_begin_;
    return true;
  }
  piece = text_.substr(match_begin_, match_end_ - match_begin_);
  pos_ = match_end_;
  has_match_ = false;
  return true;
}

size_t Gpt2Pretokenizer::next_cut(std::string_view text, size_t from) {
  for (size_t i = std::max<size_t>(from, 1); i < text.size(); ++i) {
    const CharClass before = class_of(text[i - 1]);
    if (class_of(text[i]) == kSpace && before != kSpace && before != kNonAscii) return i;
  }
  return text.size();
}

}  // namespace hwt
