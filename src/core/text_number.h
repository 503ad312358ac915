// A number typed on the command line or in an override: the whole text must be one number.
#pragma once

#include <optional>
#include <string>

namespace hwt {

// The double the whole of `text` spells (as std::stod reads it: "1e3", "inf"), or nullopt when
// it is empty, not a number, out of range or followed by anything else.
inline std::optional<double> parse_whole_double(const std::string& text) {
  try {
    size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size()) return v;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

}  // namespace hwt
