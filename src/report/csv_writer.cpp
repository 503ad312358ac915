#include "report/csv_writer.h"

#include "core/error.h"

namespace hwt {
namespace {

void append_field(std::string& out, std::string_view field) {
  if (field.find_first_of(",\"\r\n") == std::string_view::npos) {
    out += field;
    return;
  }
  out += '"';
  for (char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
}

void append_record(std::string& out, const std::vector<std::string>& fields) {
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) out += ',';
    append_field(out, fields[i]);
  }
  out += '\n';
}

}  // namespace

CsvWriter::CsvWriter(const std::vector<std::string>& header) : columns_(header.size()) {
  append_record(text_, header);
}

void CsvWriter::row(const std::vector<std::string>& fields) {
  HWT_CHECK(fields.size() == columns_, "CSV record of {} fields under a header of {}",
            fields.size(), columns_);
  append_record(text_, fields);
}

}  // namespace hwt
