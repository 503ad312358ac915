#include "data/hf_regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <array>

#include "core/error.h"

namespace hwt {
namespace {

std::string pcre2_message(int code) {
  std::array<PCRE2_UCHAR, 256> buf{};
  pcre2_get_error_message(code, buf.data(), buf.size());
  return reinterpret_cast<const char*>(buf.data());
}

}  // namespace

void HfRegex::FreeCode::operator()(pcre2_code* c) const {
  pcre2_code_free(c);
}

HfRegex::HfRegex(std::string_view pattern, bool literal, const std::string& where) {
  int error = 0;
  PCRE2_SIZE offset = 0;
  // PCRE2_LITERAL takes no PCRE2_UCP (a literal has no classes for it to change).
  const uint32_t options = PCRE2_UTF | PCRE2_MATCH_INVALID_UTF |
                           (literal ? PCRE2_LITERAL : static_cast<uint32_t>(PCRE2_UCP));
  code_.reset(pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), options,
                            &error, &offset, nullptr));
  if (code_ == nullptr)
    fail_input("{}: pattern does not compile in PCRE2 at offset {}: {}", where, offset,
               pcre2_message(error));
  jit_ = pcre2_jit_compile(code_.get(), PCRE2_JIT_COMPLETE) == 0;
}

std::vector<std::pair<size_t, size_t>> HfRegex::matches(std::string_view text) const {
  std::vector<std::pair<size_t, size_t>> out;
  const std::unique_ptr<pcre2_match_data, void (*)(pcre2_match_data*)> match(
      pcre2_match_data_create_from_pattern(code_.get(), nullptr), pcre2_match_data_free);
  HWT_CHECK(match != nullptr, "out of memory for PCRE2 match data");
  const auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t pos = 0;
  while (pos < text.size()) {
    const int rc =
        jit_ ? pcre2_jit_match(code_.get(), subject, text.size(), pos, 0, match.get(), nullptr)
             : pcre2_match(code_.get(), subject, text.size(), pos, 0, match.get(), nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    HWT_CHECK(rc > 0, "PCRE2 match failed: {}", pcre2_message(rc));
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match.get());
    const size_t begin = ovector[0], end = ovector[1];
    if (end > begin) {
      out.emplace_back(begin, end);
      pos = end;
    } else {  // an empty match: look again from the next character
      pos = begin + 1;
      while (pos < text.size() && (static_cast<unsigned char>(text[pos]) & 0xC0) == 0x80) ++pos;
    }
  }
  return out;
}

}  // namespace hwt
