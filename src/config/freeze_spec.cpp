#include "config/freeze_spec.h"

#include <charconv>
#include <string_view>

#include "core/error.h"

namespace hwt {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// A block index written in full, or -1.
int64_t block_index(std::string_view s) {
  int64_t v = -1;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && end == s.data() + s.size() && v >= 0 ? v : -1;
}

}  // namespace

bool FreezeSpec::freezes_layer(int64_t i) const {
  for (const auto& [first, last] : layers)
    if (i >= first && i <= last) return true;
  return false;
}

FreezeSpec parse_freeze(const std::string& text, int64_t layers) {
  FreezeSpec spec;
  std::string_view rest = text;
  while (!trim(rest).empty()) {
    const size_t comma = rest.find(',');
    const std::string_view part = trim(rest.substr(0, comma));
    rest.remove_prefix(comma == std::string_view::npos ? rest.size() : comma + 1);
    if (part == "embeddings") {
      spec.embeddings = true;
    } else if (part == "final_norm") {
      spec.final_norm = true;
    } else if (part == "head") {
      spec.head = true;
    } else if (part.starts_with("layers:")) {
      const std::string_view range = part.substr(7);
      const size_t dash = range.find('-');
      const int64_t first = block_index(range.substr(0, dash));
      const int64_t last =
          dash == std::string_view::npos ? first : block_index(range.substr(dash + 1));
      if (first < 0 || last < first)
        fail_input("config train.freeze: '{}' is not layers:A-B or layers:N (blocks from 0)", part);
      if (last >= layers)
        fail_input("config train.freeze: '{}' names block {}, but the model has {} (0 to {})", part,
                   last, layers, layers - 1);
      spec.layers.emplace_back(first, last);
    } else {
      fail_input(
          "config train.freeze: unknown part '{}' (expected embeddings, layers:A-B, layers:N, "
          "final_norm or head, comma-separated)",
          part);
    }
  }
  return spec;
}

}  // namespace hwt
