#include "data/token_id_text.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "data/text_io.h"

namespace hwt {

std::string token_ids_json(const std::vector<int32_t>& ids) {
  return fmt::format("[{}]", fmt::join(ids, ", "));
}

std::vector<std::vector<int32_t>> parse_token_id_lines(std::string_view text,
                                                       const std::string& source,
                                                       int64_t vocab_size) {
  std::vector<std::vector<int32_t>> arrays;
  const std::vector<std::string_view> lines = split_lines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (split_whitespace(lines[i]).empty()) continue;
    const auto bad = [&](std::string_view why) {
      fail_input("{} line {}: {} (expected a JSON array of token ids per line)", source, i + 1,
                 why);
    };
    const nlohmann::json j =
        nlohmann::json::parse(lines[i].begin(), lines[i].end(), nullptr, false);
    if (j.is_discarded()) bad("not valid JSON");
    if (!j.is_array()) bad("not an array");
    std::vector<int32_t>& ids = arrays.emplace_back();
    ids.reserve(j.size());
    for (const nlohmann::json& id : j) {
      if (!id.is_number_integer()) bad(fmt::format("{} is not an integer", id.dump()));
      const int64_t v = id.get<int64_t>();
      if (v < 0 || v >= vocab_size)
        bad(fmt::format("token id {} is outside the vocabulary of {}", v, vocab_size));
      ids.push_back(static_cast<int32_t>(v));
    }
  }
  return arrays;
}

}  // namespace hwt
