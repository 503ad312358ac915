#include "data/gpt2_pretokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

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

Gpt2Pretokenizer::Cursor::Cursor(const Gpt2Pretokenizer& p, std::string_view text)
    : p_(p), text_(text), match_(pcre2_match_data_create_from_pattern(p.code_.get(), nullptr)) {
  HWT_CHECK(match_ != nullptr, "out of memory for PCRE2 match data");
  find_match();
}

void Gpt2Pretokenizer::Cursor::find_match() {
  const auto subject = reinterpret_cast<PCRE2_SPTR>(text_.data());
  const int rc =
      p_.jit_
          ? pcre2_jit_match(p_.code_.get(), subject, text_.size(), pos_, 0, match_.get(), nullptr)
          : pcre2_match(p_.code_.get(), subject, text_.size(), pos_, 0, match_.get(), nullptr);
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
  if (pos_ < match_begin_) {  // invalid UTF-8 before the next match
    piece = text_.substr(pos_, match_begin_ - pos_);
    pos_ = match_begin_;
    return true;
  }
  piece = text_.substr(match_begin_, match_end_ - match_begin_);
  pos_ = match_end_;
  if (pos_ < text_.size()) find_match();
  return true;
}

}  // namespace hwt
