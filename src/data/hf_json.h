// Reading the parts of a Hugging Face tokenizer.json: errors that name the file and the part, and
// the one message for a part hwt does not implement.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace hwt {

// InputError "tokenizer.json FILE: PART type 'TYPE' is not supported (hwt supports: SUPPORTED)".
[[noreturn]] void fail_unsupported(const std::string& file, std::string_view part,
                                   std::string_view type, std::string_view supported);

// j[key] as T, `fallback` when the key is absent or null; InputError naming the file, the part and
// the key when it has another type.
template <typename T>
T hf_value(const nlohmann::json& j, const char* key, T fallback, const std::string& file,
           std::string_view part);

// The "type" of a part; InputError when it has none.
std::string hf_type(const nlohmann::json& j, const std::string& file, std::string_view part);

}  // namespace hwt
