#include "core/toml_reader.h"

#include <fmt/format.h>

#include <cmath>

#include "core/error.h"
#include "core/files.h"

namespace hwt {

namespace {

toml::table parse(std::string_view text, const std::string& origin, const std::string& what) {
  try {
    return toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    const auto& src = e.source();
    fail_input("{} {}:{}:{}: {}", what, origin, src.begin.line, src.begin.column, e.description());
  }
}

}  // namespace

TomlReader TomlReader::from_file(const std::string& path, const std::string& what) {
  return from_string(read_file(path, what), path, what);
}

TomlReader TomlReader::from_string(std::string_view text, const std::string& origin,
                                   const std::string& what) {
  auto root = std::make_shared<const toml::table>(parse(text, origin, what));
  const toml::table* t = root.get();
  return TomlReader(std::move(root), t, origin, what, "");
}

TomlReader::TomlReader(std::shared_ptr<const toml::table> root, const toml::table* table,
                       std::string file, std::string what, std::string prefix)
    : root_(std::move(root)),
      table_(table),
      file_(std::move(file)),
      what_(std::move(what)),
      prefix_(std::move(prefix)),
      used_(std::make_shared<std::set<std::string>>()) {}

TomlReader TomlReader::labelled(std::string label) const {
  TomlReader r(root_, table_, file_, what_, "");
  r.label_ = std::move(label);
  r.used_ = used_;
  return r;
}

bool TomlReader::is_table(const std::string& key) const {
  const toml::node* n = table_->get(key);
  return n && n->is_table();
}

TomlReader::Scalar TomlReader::scalar(const std::string& key) const {
  const toml::node& n = require(key);
  if (auto v = n.as_integer()) return v->get();
  if (auto v = n.as_floating_point()) return v->get();
  if (auto v = n.as_boolean()) return v->get();
  if (auto v = n.as_string()) return v->get();
  fail(key, "must be a number, true/false or a string");
}

std::string TomlReader::path(const std::string& key) const {
  return prefix_.empty() ? key : prefix_ + "." + key;
}

void TomlReader::fail(const std::string& key, const std::string& message) const {
  fail_input("{} {}: {}{} {}", what_, file_, label_.empty() ? "" : label_ + ": ", path(key),
             message);
}

const toml::node* TomlReader::node(const std::string& key) const {
  used_->insert(key);
  return table_->get(key);
}

const toml::node& TomlReader::require(const std::string& key) const {
  const toml::node* n = node(key);
  if (!n) fail(key, "is missing");
  return *n;
}

bool TomlReader::has(const std::string& key) const {
  return table_->get(key) != nullptr;
}

double TomlReader::number(const std::string& key) const {
  const toml::node& n = require(key);
  std::optional<double> v = n.value<double>();
  if (!v || !std::isfinite(*v)) fail(key, "must be a number");
  return *v;
}

double TomlReader::number(const std::string& key, double fallback) const {
  return has(key) ? number(key) : (used_->insert(key), fallback);
}

int64_t TomlReader::integer(const std::string& key) const {
  const toml::node& n = require(key);
  if (!n.is_integer()) fail(key, "must be an integer");
  return *n.value<int64_t>();
}

int64_t TomlReader::integer(const std::string& key, int64_t fallback) const {
  return has(key) ? integer(key) : (used_->insert(key), fallback);
}

double TomlReader::positive_number(const std::string& key) const {
  return check_positive(key, number(key));
}

double TomlReader::positive_number(const std::string& key, double fallback) const {
  return check_positive(key, number(key, fallback));
}

double TomlReader::non_negative_number(const std::string& key) const {
  const double v = number(key);
  if (v < 0) fail(key, fmt::format("must not be negative, got {}", v));
  return v;
}

int64_t TomlReader::positive_integer(const std::string& key) const {
  return check_positive_integer(key, integer(key));
}

int64_t TomlReader::positive_integer(const std::string& key, int64_t fallback) const {
  return check_positive_integer(key, integer(key, fallback));
}

double TomlReader::check_positive(const std::string& key, double v) const {
  if (v <= 0) fail(key, fmt::format("must be positive, got {}", v));
  return v;
}

int64_t TomlReader::check_positive_integer(const std::string& key, int64_t v) const {
  if (v < 1) fail(key, fmt::format("must be a positive integer, got {}", v));
  return v;
}

bool TomlReader::boolean(const std::string& key, bool fallback) const {
  if (!has(key)) return used_->insert(key), fallback;
  const toml::node& n = require(key);
  if (!n.is_boolean()) fail(key, "must be true or false");
  return *n.value<bool>();
}

std::string TomlReader::string(const std::string& key) const {
  const toml::node& n = require(key);
  if (!n.is_string()) fail(key, "must be a string");
  return *n.value<std::string>();
}

std::string TomlReader::string(const std::string& key, const std::string& fallback) const {
  return has(key) ? string(key) : (used_->insert(key), fallback);
}

std::vector<double> TomlReader::numbers(const std::string& key) const {
  const toml::node& n = require(key);
  std::vector<double> out;
  if (const toml::array* a = n.as_array()) {
    for (const toml::node& e : *a) {
      std::optional<double> v = e.value<double>();
      if (!v || !std::isfinite(*v)) fail(key, "must be a list of numbers");
      out.push_back(*v);
    }
  } else {
    out.push_back(number(key));
  }
  if (out.empty()) fail(key, "must not be an empty list");
  return out;
}

std::vector<std::string> TomlReader::strings(const std::string& key) const {
  const toml::node& n = require(key);
  std::vector<std::string> out;
  if (const toml::array* a = n.as_array()) {
    for (const toml::node& e : *a) {
      if (!e.is_string()) fail(key, "must be a list of strings");
      out.push_back(*e.value<std::string>());
    }
  } else {
    out.push_back(string(key));
  }
  if (out.empty()) fail(key, "must not be an empty list");
  return out;
}

std::vector<int64_t> TomlReader::positive_integers(const std::string& key) const {
  std::vector<int64_t> out;
  for (double v : numbers(key)) {
    // Range first: converting a double beyond int64's range is undefined behaviour.
    constexpr double kTwoTo63 = 9223372036854775808.0;
    if (v < 1 || v >= kTwoTo63 || v != std::floor(v))
      fail(key, fmt::format("must list positive integers, got {}", v));
    out.push_back(static_cast<int64_t>(v));
  }
  return out;
}

std::vector<int64_t> TomlReader::integers(const std::string& key) const {
  const toml::array* a = require(key).as_array();
  if (!a) fail(key, "must be a list of integers");
  std::vector<int64_t> out;
  for (const toml::node& e : *a) {
    if (!e.is_integer()) fail(key, "must be a list of integers");
    out.push_back(*e.value<int64_t>());
  }
  return out;
}

TomlReader TomlReader::table(const std::string& key) const {
  const toml::node& n = require(key);
  const toml::table* t = n.as_table();
  if (!t) fail(key, "must be a table");
  TomlReader r(root_, t, file_, what_, path(key));
  r.label_ = label_;
  return r;
}

std::vector<TomlReader> TomlReader::tables(const std::string& key) const {
  const toml::node& n = require(key);
  const toml::array* a = n.as_array();
  if (!a || !a->is_array_of_tables()) fail(key, "must be an array of tables ([[" + key + "]])");
  std::vector<TomlReader> out;
  for (size_t i = 0; i < a->size(); ++i)
    out.push_back(TomlReader(root_, (*a)[i].as_table(), file_, what_,
                             path(key) + "[" + std::to_string(i) + "]"));
  return out;
}

std::vector<std::string> TomlReader::keys() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : *table_) out.emplace_back(k.str());
  return out;
}

void TomlReader::reject_unknown() const {
  for (const auto& [k, v] : *table_)
    if (!used_->count(std::string(k.str()))) fail(std::string(k.str()), "is not a known key");
}

}  // namespace hwt
