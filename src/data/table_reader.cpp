// Labelled text in one file per split: tsv (text<TAB>label), csv (header row names the
// columns) or jsonl (one object per line).
#include <nlohmann/json.hpp>

#include <algorithm>

#include "core/error.h"
#include "data/csv.h"
#include "data/partition.h"
#include "data/raw_data.h"
#include "data/text_io.h"

namespace hwt {
namespace {

using FilePtr = std::shared_ptr<const std::string>;

RawExample make_example(std::string text, std::string label, const FilePtr& file, int64_t line) {
  if (label.empty()) fail_input("data file {} line {}: empty label", *file, line);
  RawExample e;
  e.text = std::move(text);
  e.label = std::move(label);
  e.label_file = file;
  e.line = line;
  return e;
}

void read_tsv(std::string_view text, const FilePtr& file, std::vector<RawExample>& out) {
  const std::vector<std::string_view> lines = split_lines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    const size_t tab = lines[i].find('\t');
    if (tab == std::string_view::npos)
      fail_input("data file {} line {}: expected text<TAB>label", *file, i + 1);
    std::string_view label = lines[i].substr(tab + 1);
    label = label.substr(0, label.find('\t'));  // further columns are ignored
    out.push_back(make_example(std::string(lines[i].substr(0, tab)), std::string(label), file,
                               static_cast<int64_t>(i + 1)));
  }
}

void read_csv(std::string_view text, const FilePtr& file, const DataConfig& c,
              std::vector<RawExample>& out) {
  const std::vector<CsvRecord> records = parse_csv(text, *file);
  if (records.empty()) return;
  const std::vector<std::string>& header = records[0].fields;
  const auto column = [&](const std::string& name, const char* key) {
    const auto it = std::find(header.begin(), header.end(), name);
    if (it == header.end())
      fail_input("data file {}: no column '{}' (config {}) in the header row", *file, name, key);
    return static_cast<size_t>(it - header.begin());
  };
  const size_t text_col = column(c.text_field, "data.text_field");
  const size_t label_col = column(c.label_field, "data.label_field");
  for (size_t r = 1; r < records.size(); ++r) {
    const CsvRecord& rec = records[r];
    if (rec.fields.size() <= std::max(text_col, label_col))
      fail_input("data file {} line {}: {} fields, the header has {}", *file, rec.line,
                 rec.fields.size(), header.size());
    out.push_back(make_example(rec.fields[text_col], rec.fields[label_col], file, rec.line));
  }
}

void read_jsonl(std::string_view text, const FilePtr& file, const DataConfig& c,
                std::vector<RawExample>& out) {
  const std::vector<std::string_view> lines = split_lines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (split_whitespace(lines[i]).empty()) continue;
    const auto line = static_cast<int64_t>(i + 1);
    const nlohmann::json j = nlohmann::json::parse(lines[i], nullptr, false);
    if (j.is_discarded()) fail_input("data file {} line {}: malformed JSON", *file, line);
    if (!j.is_object()) fail_input("data file {} line {}: expected a JSON object", *file, line);
    const auto field = [&](const std::string& name, const char* key) -> const nlohmann::json& {
      const auto it = j.find(name);
      if (it == j.end())
        fail_input("data file {} line {}: no field '{}' (config {})", *file, line, name, key);
      return *it;
    };
    const nlohmann::json& t = field(c.text_field, "data.text_field");
    const nlohmann::json& l = field(c.label_field, "data.label_field");
    if (!t.is_string())
      fail_input("data file {} line {}: field '{}' must be a string", *file, line, c.text_field);
    if (!l.is_string() && !l.is_number_integer() && !l.is_boolean())
      fail_input("data file {} line {}: field '{}' must be a string, integer or boolean", *file,
                 line, c.label_field);
    out.push_back(make_example(t.get<std::string>(),
                               l.is_string() ? l.get<std::string>() : l.dump(), file, line));
  }
}

std::vector<RawExample> read_file(const std::string& path, const DataConfig& c) {
  const auto file = std::make_shared<const std::string>(path);
  const std::string text = read_text_file(path);
  std::vector<RawExample> out;
  switch (c.format) {
    case DataFormat::Tsv:
      read_tsv(text, file, out);
      break;
    case DataFormat::Csv:
      read_csv(text, file, c, out);
      break;
    case DataFormat::Jsonl:
      read_jsonl(text, file, c, out);
      break;
    default:
      HWT_CHECK(false, "read_table called for data.format={}", format_name(c.format));
  }
  if (out.empty()) fail_input("data file {} has no examples", path);
  return out;
}

std::vector<RawExample> pick(std::vector<RawExample>& all, const std::vector<int64_t>& indices) {
  std::vector<RawExample> out;
  out.reserve(indices.size());
  for (int64_t k : indices) out.push_back(std::move(all[static_cast<size_t>(k)]));
  return out;
}

}  // namespace

RawSplits read_table(const DataConfig& c) {
  if (c.path.empty())
    fail_input("config data.path must name the training file for data.format={}",
               format_name(c.format));
  std::vector<RawExample> all = read_file(c.path, c);
  const Partition p =
      partition(std::ssize(all), c.valid_path.empty() ? c.valid_fraction : 0.0,
                c.test_path.empty() ? c.test_fraction : 0.0, static_cast<uint64_t>(c.seed));
  RawSplits r;
  r.train = pick(all, p.train);
  r.valid = c.valid_path.empty() ? pick(all, p.valid) : read_file(c.valid_path, c);
  r.test = c.test_path.empty() ? pick(all, p.test) : read_file(c.test_path, c);
  r.source = fmt::format("{} {}", format_name(c.format), c.path);
  return r;
}

}  // namespace hwt
