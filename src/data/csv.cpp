#include "data/csv.h"

#include <algorithm>

#include "core/error.h"

namespace hwt {

std::vector<CsvRecord> parse_csv(std::string_view text, const std::string& file) {
  std::vector<CsvRecord> records;
  const size_t n = text.size();
  size_t i = 0;
  int64_t line = 1;
  // At a line end ("\n" or "\r\n"), steps past it and returns true.
  const auto end_of_line = [&] {
    if (i < n && text[i] == '\n') {
      ++i;
    } else if (i + 1 < n && text[i] == '\r' && text[i + 1] == '\n') {
      i += 2;
    } else {
      return false;
    }
    ++line;
    return true;
  };
  while (i < n) {
    if (end_of_line()) continue;  // blank line
    CsvRecord rec;
    rec.line = line;
    for (;;) {  // one field per iteration
      std::string field;
      if (i < n && text[i] == '"') {
        const int64_t start_line = line;
        for (++i;; ++i) {
          if (i >= n)
            fail_input("data file {} line {}: quoted field is never closed", file, start_line);
          if (text[i] == '"') {
            if (i + 1 < n && text[i + 1] == '"') {
              field += '"';
              ++i;
            } else {
              ++i;
              break;
            }
          } else {
            line += text[i] == '\n';
            field += text[i];
          }
        }
        if (i < n && text[i] != ',' && text[i] != '\n' && text.substr(i, 2) != "\r\n")
          fail_input("data file {} line {}: unexpected text after a closing quote", file, line);
      } else {
        const size_t end = std::min(text.find_first_of(",\n", i), n);
        field = text.substr(i, end - i);
        if (field.ends_with('\r')) field.pop_back();  // of a "\r\n" line end
        i = end;
      }
      rec.fields.push_back(std::move(field));
      if (i < n && text[i] == ',') {
        ++i;
        continue;
      }
      end_of_line();
      break;
    }
    records.push_back(std::move(rec));
  }
  return records;
}

}  // namespace hwt
