// Strict reading of the simulator's TOML files: every value is checked for type and range,
// every key must be known, and each error names the file and the dotted key.
#pragma once

#include <toml++/toml.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace hwt::accel {

// Parses a whole file; a syntax error becomes InputError "<what> <file>:<line>:<col>: ...".
toml::table parse_toml_file(const std::string& path, const std::string& what);

class TomlReader {
 public:
  // `what` names the kind of file in messages ("accelerator", "design space").
  TomlReader(const toml::table& t, std::string file, std::string what, std::string prefix = "");

  bool has(const std::string& key) const;
  double number(const std::string& key) const;
  double number(const std::string& key, double fallback) const;
  int64_t integer(const std::string& key) const;
  int64_t integer(const std::string& key, int64_t fallback) const;
  bool boolean(const std::string& key, bool fallback) const;
  std::string string(const std::string& key) const;
  std::string string(const std::string& key, const std::string& fallback) const;
  // A scalar or an array of scalars, as a list.
  std::vector<double> numbers(const std::string& key) const;
  std::vector<std::string> strings(const std::string& key) const;
  TomlReader table(const std::string& key) const;
  // Arrays of tables ([[key]]).
  std::vector<TomlReader> tables(const std::string& key) const;
  std::vector<std::string> keys() const;

  // Raises InputError for a key that no accessor asked for (catches typos).
  void reject_unknown() const;

  // "<what> <file>: <prefix.key> <message>" as an InputError.
  [[noreturn]] void fail(const std::string& key, const std::string& message) const;
  std::string path(const std::string& key) const;

 private:
  const toml::node* node(const std::string& key) const;
  const toml::node& require(const std::string& key) const;

  const toml::table* table_;
  std::string file_, what_, prefix_;
  std::shared_ptr<std::set<std::string>> used_;
};

}  // namespace hwt::accel
