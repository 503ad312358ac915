// The byte-level alphabet of GPT-2's encoder.py (its bytes_to_unicode), in which byte-level BPE
// vocabularies write their tokens: printable Latin-1 bytes stand for themselves and the other 68
// bytes for U+0100 onwards in byte order, so every token is printable text.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace hwt {

// Byte -> the code point that writes it.
const std::array<uint16_t, 256>& byte_level_code_points();
// `bytes` written in the alphabet, as UTF-8: how a byte-level vocabulary spells them.
std::string byte_level_text(std::string_view bytes);
// Code point -> the byte it writes; -1 for a code point outside the alphabet.
int byte_level_byte(uint32_t code_point);

}  // namespace hwt
