// hwt's CSV outputs, written as RFC 4180 says: fields separated by commas, a field holding a
// comma, a double quote, CR or LF enclosed in double quotes with its quotes doubled. Records end
// in "\n" rather than CRLF, as hwt's files always have (RFC 4180 readers accept both).
#pragma once

#include <fmt/format.h>

#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace hwt {

class CsvWriter {
 public:
  // The table starts with its header record.
  explicit CsvWriter(const std::vector<std::string>& header);

  // One record of formatted fields, as many as the header has.
  void row(const std::vector<std::string>& fields);
  // One record of strings and numbers; numbers are written as fmt's "{}" writes them (format
  // any other way, e.g. fixed decimals, to a string first).
  template <class... Fields>
  void values(const Fields&... fields) {
    row({text_of(fields)...});
  }

  const std::string& text() const { return text_; }

 private:
  template <class T>
  static std::string text_of(const T& v) {
    if constexpr (std::is_convertible_v<const T&, std::string_view>)
      return std::string(std::string_view(v));
    else
      return fmt::format("{}", v);
  }

  size_t columns_;
  std::string text_;
};

}  // namespace hwt
