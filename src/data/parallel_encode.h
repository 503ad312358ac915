// Encoding a corpus of documents on several threads with ids identical to encoding them one
// after another: the documents are cut into parts where their tokenizer can cut them exactly
// (Tokenizer::independent_parts), threads take the parts in turn, and the stream returned reads
// the parts in order where they were encoded, never copied together. It relies only on
// Tokenizer::encode being const and safe to call from several threads at once.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "data/token_stream.h"
#include "data/tokenizer.h"

namespace hwt {

struct EncodeProgress {
  size_t bytes_done = 0, bytes_total = 0;
  size_t tokens_done = 0;
  double seconds = 0;
};

// The ids of `docs`, each encoded alone, with `separator` between consecutive documents when it
// is >= 0. `threads` <= 0 uses every core. `report`, when set, is called on this thread about
// every `report_every_s` seconds while documents remain.
TokenStream encode_documents(const Tokenizer& tok, const std::vector<std::string_view>& docs,
                             int32_t separator, int64_t threads,
                             const std::function<void(const EncodeProgress&)>& report = {},
                             double report_every_s = 2.0);

}  // namespace hwt
