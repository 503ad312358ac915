// A number typed on the command line or in an override: the whole text must be one number.
#pragma once

#include <cmath>
#include <optional>
#include <string>
#include <utility>

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

// A positive size in bytes with its unit: "6MB", "22.5MB", "512KiB", "100B" (B; decimal KB, MB,
// GB; binary KiB, MiB, GiB); nullopt for anything else.
inline std::optional<double> parse_byte_size(const std::string& text) {
  // Longest units first, so "MiB" is not read as "B" after "Mi".
  static const std::pair<const char*, double> kUnits[] = {
      {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"KB", 1e3}, {"MB", 1e6},
      {"GB", 1e9},     {"B", 1.0}};
  for (const auto& [unit, scale] : kUnits) {
    const std::string u = unit;
    if (text.size() <= u.size() || text.compare(text.size() - u.size(), u.size(), u) != 0) continue;
    const auto v = parse_whole_double(text.substr(0, text.size() - u.size()));
    if (!v || !std::isfinite(*v) || *v <= 0) return std::nullopt;
    return *v * scale;
  }
  return std::nullopt;
}

}  // namespace hwt
