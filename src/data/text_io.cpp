#include "data/text_io.h"

#include <algorithm>
#include <filesystem>

#include "core/error.h"
#include "core/files.h"
#include "core/paths.h"

namespace hwt {

std::string read_text_file(const std::string& path) {
  std::string text = read_file(path, "data file");
  if (text.starts_with("\xEF\xBB\xBF")) text.erase(0, 3);
  return text;
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (line.ends_with('\r')) line.remove_suffix(1);
    lines.push_back(line);
    start = end + 1;
  }
  return lines;
}

std::vector<std::string_view> split_whitespace(std::string_view line) {
  constexpr std::string_view kSpace = " \t\n\v\f\r";
  std::vector<std::string_view> pieces;
  size_t start = line.find_first_not_of(kSpace);
  while (start != std::string_view::npos) {
    const size_t end = std::min(line.find_first_of(kSpace, start), line.size());
    pieces.push_back(line.substr(start, end - start));
    start = line.find_first_not_of(kSpace, end);
  }
  return pieces;
}

void require_folder(const std::string& path, std::string_view what) {
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec))
    fail_input("data folder not found: {} (expected {})", path, what);
}

std::string absolute_data_path(const std::string& path) {
  std::error_code ec;
  std::string found = path;
  if (!path.empty() && path.front() != '/' && !std::filesystem::exists(path, ec))
    found = find_shipped_file(path).value_or(path);
  const std::filesystem::path abs = std::filesystem::absolute(found, ec);
  return ec ? found : abs.lexically_normal().string();
}

size_t utf8_length(std::string_view s, size_t i) {
  const auto at = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = at(i);
  size_t len;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;  // overlong
    if (c == 0xED) hi = 0x9F;  // surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;  // overlong
    if (c == 0xF4) hi = 0x8F;  // beyond U+10FFFF
  } else {
    return 0;
  }
  if (i + len > s.size() || at(i + 1) < lo || at(i + 1) > hi) return 0;
  for (size_t k = 2; k < len; ++k)
    if (at(i + k) < 0x80 || at(i + k) > 0xBF) return 0;
  return len;
}

std::string to_valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
    } else if (const size_t len = utf8_length(s, i); len > 0) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      out += static_cast<char>(0xC0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3F));
      ++i;
    }
  }
  return out;
}

}  // namespace hwt
