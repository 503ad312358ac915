// Typed reads of a Hugging Face config.json, with one-line errors that name the file and field.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace hwt {

class HfConfig {
 public:
  // Reads and parses `path` (a config.json); InputError when it is unreadable or not an object.
  static HfConfig load(const std::string& path);
  HfConfig(nlohmann::json j, std::string path) : json_(std::move(j)), path_(std::move(path)) {}

  const std::string& path() const { return path_; }
  const nlohmann::json& json() const { return json_; }
  // Present and not null.
  bool has(std::string_view key) const;
  int64_t integer(std::string_view key, int64_t fallback) const;
  double number(std::string_view key, double fallback) const;
  bool boolean(std::string_view key, bool fallback) const;
  std::string string(std::string_view key, const std::string& fallback) const;
  // The object under `key`, or null when absent.
  const nlohmann::json& object(std::string_view key) const;

  // InputError "config.json <path>: <key>=<value>: <why>".
  [[noreturn]] void unsupported(std::string_view key, std::string_view why) const;

 private:
  const nlohmann::json* find(std::string_view key) const;
  [[noreturn]] void wrong_type(std::string_view key, std::string_view expected) const;

  nlohmann::json json_;
  std::string path_;
};

}  // namespace hwt
