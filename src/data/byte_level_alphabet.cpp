#include "data/byte_level_alphabet.h"

#include <cstddef>

namespace hwt {
namespace {

constexpr size_t kAlphabetEnd = 256 + 68;  // one past the highest code point of the alphabet

std::array<uint16_t, 256> make_code_points() {
  std::array<uint16_t, 256> cp{};
  const auto printable = [](int b) {
    return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
  };
  uint16_t next = 256;
  for (int b = 0; b < 256; ++b)
    cp[static_cast<size_t>(b)] = printable(b) ? static_cast<uint16_t>(b) : next++;
  return cp;
}

std::array<int16_t, kAlphabetEnd> make_bytes() {
  std::array<int16_t, kAlphabetEnd> byte_of;
  byte_of.fill(-1);
  const std::array<uint16_t, 256>& cp = byte_level_code_points();
  for (int16_t b = 0; b < 256; ++b) byte_of[cp[static_cast<size_t>(b)]] = b;
  return byte_of;
}

}  // namespace

std::string byte_level_text(std::string_view bytes) {
  std::string out;
  for (unsigned char b : bytes) {
    const uint16_t cp = byte_level_code_points()[b];  // below U+0144: one or two UTF-8 bytes
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else {
      out += static_cast<char>(0xC0 | cp >> 6);
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }
  return out;
}

const std::array<uint16_t, 256>& byte_level_code_points() {
  static const std::array<uint16_t, 256> cp = make_code_points();
  return cp;
}

int byte_level_byte(uint32_t code_point) {
  static const std::array<int16_t, kAlphabetEnd> byte_of = make_bytes();
  return code_point < kAlphabetEnd ? byte_of[code_point] : -1;
}

}  // namespace hwt
