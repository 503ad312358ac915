#include "data/hf_json.h"

#include <cstdint>

#include "core/error.h"

namespace hwt {

void fail_unsupported(const std::string& file, std::string_view part, std::string_view type,
                      std::string_view supported) {
  fail_input("tokenizer.json {}: {} '{}' is not supported (hwt supports: {})", file, part, type,
             supported);
}

template <typename T>
T hf_value(const nlohmann::json& j, const char* key, T fallback, const std::string& file,
           std::string_view part) {
  if (!j.is_object()) fail_input("tokenizer.json {}: {} is not an object", file, part);
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  try {
    return it->get<T>();
  } catch (const nlohmann::json::exception&) {
    fail_input("tokenizer.json {}: {} has a '{}' of the wrong type ({})", file, part, key,
               it->type_name());
  }
}

template bool hf_value(const nlohmann::json&, const char*, bool, const std::string&,
                       std::string_view);
template int64_t hf_value(const nlohmann::json&, const char*, int64_t, const std::string&,
                          std::string_view);
template double hf_value(const nlohmann::json&, const char*, double, const std::string&,
                         std::string_view);
template std::string hf_value(const nlohmann::json&, const char*, std::string, const std::string&,
                              std::string_view);

std::string hf_type(const nlohmann::json& j, const std::string& file, std::string_view part) {
  const std::string type = hf_value<std::string>(j, "type", "", file, part);
  if (type.empty()) fail_input("tokenizer.json {}: {} has no \"type\"", file, part);
  return type;
}

}  // namespace hwt
