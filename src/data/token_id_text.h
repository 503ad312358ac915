// Token ids as text, one JSON array per line ("[464, 3290, 13]"): what `hwt tokenizer encode`
// prints and `hwt tokenizer decode` reads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hwt {

// "[a, b, c]" without a newline.
std::string token_ids_json(const std::vector<int32_t>& ids);

// The arrays of `text`, one per non-blank line, each id in 0..vocab_size-1. InputError naming
// `source` and the line on anything else.
std::vector<std::vector<int32_t>> parse_token_id_lines(std::string_view text,
                                                       const std::string& source,
                                                       int64_t vocab_size);

}  // namespace hwt
