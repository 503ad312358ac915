#include "interop/hf_config.h"

#include "core/error.h"
#include "core/files.h"

namespace hwt {

HfConfig HfConfig::load(const std::string& path) {
  const std::string text = read_file(path, "config.json");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    fail_input("config.json {}: not valid JSON ({})", path, e.what());
  }
  if (!j.is_object()) fail_input("config.json {}: not a JSON object", path);
  return HfConfig(std::move(j), path);
}

const nlohmann::json* HfConfig::find(std::string_view key) const {
  const auto it = json_.find(key);
  return it == json_.end() || it->is_null() ? nullptr : &*it;
}

bool HfConfig::has(std::string_view key) const {
  return find(key) != nullptr;
}

void HfConfig::wrong_type(std::string_view key, std::string_view expected) const {
  fail_input("config.json {}: {}={} is not {}", path_, key, find(key)->dump(), expected);
}

void HfConfig::unsupported(std::string_view key, std::string_view why) const {
  const nlohmann::json* v = find(key);
  fail_input("config.json {}: {}={}: {}", path_, key, v ? v->dump() : "null", why);
}

int64_t HfConfig::integer(std::string_view key, int64_t fallback) const {
  const nlohmann::json* v = find(key);
  if (!v) return fallback;
  if (!v->is_number_integer()) wrong_type(key, "an integer");
  return v->get<int64_t>();
}

double HfConfig::number(std::string_view key, double fallback) const {
  const nlohmann::json* v = find(key);
  if (!v) return fallback;
  if (!v->is_number()) wrong_type(key, "a number");
  return v->get<double>();
}

bool HfConfig::boolean(std::string_view key, bool fallback) const {
  const nlohmann::json* v = find(key);
  if (!v) return fallback;
  if (!v->is_boolean()) wrong_type(key, "true or false");
  return v->get<bool>();
}

std::string HfConfig::string(std::string_view key, const std::string& fallback) const {
  const nlohmann::json* v = find(key);
  if (!v) return fallback;
  if (!v->is_string()) wrong_type(key, "a string");
  return v->get<std::string>();
}

const nlohmann::json& HfConfig::object(std::string_view key) const {
  static const nlohmann::json null;
  const nlohmann::json* v = find(key);
  if (!v) return null;
  if (!v->is_object()) wrong_type(key, "an object");
  return *v;
}

}  // namespace hwt
