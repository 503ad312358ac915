// The one strict reader of hwt's TOML files (run configs, the GPU catalog, accelerator files):
// every value is checked for type, every key must be known (reject_unknown), and each error is
// one InputError line "<what> <file>: <dotted key> <problem>".
#pragma once

#include <toml++/toml.h>

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace hwt {

class TomlReader {
 public:
  // The whole file (core/files.h read_file); a syntax error becomes InputError
  // "<what> <file>:<line>:<col>: <problem>". `what` names the kind of file ("config").
  static TomlReader from_file(const std::string& path, const std::string& what);
  // The same from text; `origin` stands for the file name in messages.
  static TomlReader from_string(std::string_view text, const std::string& origin,
                                const std::string& what);

  bool has(const std::string& key) const;
  bool is_table(const std::string& key) const;
  double number(const std::string& key) const;
  double number(const std::string& key, double fallback) const;
  int64_t integer(const std::string& key) const;
  int64_t integer(const std::string& key, int64_t fallback) const;
  // The same, checked: one InputError "must be positive, got X" (or "... a positive integer",
  // "must not be negative") for a value out of range.
  double positive_number(const std::string& key) const;
  double positive_number(const std::string& key, double fallback) const;
  double non_negative_number(const std::string& key) const;
  int64_t positive_integer(const std::string& key) const;
  int64_t positive_integer(const std::string& key, int64_t fallback) const;
  bool boolean(const std::string& key, bool fallback) const;
  std::string string(const std::string& key) const;
  std::string string(const std::string& key, const std::string& fallback) const;
  // A scalar or an array of scalars, as a list.
  std::vector<double> numbers(const std::string& key) const;
  std::vector<std::string> strings(const std::string& key) const;
  // A positive integer or a non-empty list of them; whole numbers written as floats ("2.0") count.
  std::vector<int64_t> positive_integers(const std::string& key) const;
  // A list of integers (an empty list allowed).
  std::vector<int64_t> integers(const std::string& key) const;
  // An integer, number, boolean or string, whichever it is.
  using Scalar = std::variant<int64_t, double, bool, std::string>;
  Scalar scalar(const std::string& key) const;
  TomlReader table(const std::string& key) const;
  // Arrays of tables ([[key]]).
  std::vector<TomlReader> tables(const std::string& key) const;
  std::vector<std::string> keys() const;  // in file order

  // The same table, named `label` in messages ("gpu entry 2 ('A100')"), keys counted from it.
  TomlReader labelled(std::string label) const;

  // Raises InputError for a key that no accessor asked for (catches typos).
  void reject_unknown() const;

  // "<what> <file>: <label: ><prefix.key> <message>" as an InputError.
  [[noreturn]] void fail(const std::string& key, const std::string& message) const;
  // The dotted key as messages name it ("pe.count").
  std::string path(const std::string& key) const;

 private:
  TomlReader(std::shared_ptr<const toml::table> root, const toml::table* table, std::string file,
             std::string what, std::string prefix);
  const toml::node* node(const std::string& key) const;
  const toml::node& require(const std::string& key) const;
  double check_positive(const std::string& key, double v) const;
  int64_t check_positive_integer(const std::string& key, int64_t v) const;

  std::shared_ptr<const toml::table> root_;  // keeps the parsed file alive for sub-tables
  const toml::table* table_;
  std::string file_, what_, prefix_, label_;
  std::shared_ptr<std::set<std::string>> used_;
};

}  // namespace hwt
