// RFC 4180 CSV: comma-separated fields, double-quoted fields may hold commas, newlines and
// doubled quotes ("").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hwt {

struct CsvRecord {
  std::vector<std::string> fields;
  int64_t line = 0;  // 1-based line where the record starts
};

// Records of `text`; blank lines are skipped. InputError naming `file` and the line on an
// unterminated quoted field or text after a closing quote.
std::vector<CsvRecord> parse_csv(std::string_view text, const std::string& file);

}  // namespace hwt
