// The token cache: a corpus is encoded once into a token shard (token_shard.h) in a cache
// folder and memory-mapped by every later run with the same tokenizer and corpus. An entry
// made by another tokenizer or from other bytes, truncated or corrupt, is rebuilt with a
// notice, never reused. Entries are written atomically, so runs racing to build one each
// rename a whole file over it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "data/token_stream.h"
#include "data/tokenizer.h"

namespace hwt {

class ProgressMeter;

inline constexpr std::string_view kTokenCacheOff = "off";

// The folder data.cache_dir names: "" is user_cache_dir()/tokens, "off" is none ("").
std::string token_cache_dir(const std::string& configured);

// A corpus as its documents, each encoded alone.
struct Corpus {
  std::string label;     // short name for the entry's file name and messages: "sotu", a file stem
  std::string location;  // where it was read (file or folder), so corpora live side by side
  std::string recipe;    // how its files became these documents (data.format and its rules)
  std::vector<std::string_view> documents;
};

// The file in `cache_dir` that holds `corpus` encoded by `tok`: <label>-<16 hex digits>.tokens,
// the digits a fingerprint of where the corpus was read, its recipe, the tokenizer's to_json()
// and hwt's version, so corpora and tokenizers live side by side.
std::string token_cache_entry(const Corpus& corpus, const Tokenizer& tok,
                              const std::string& cache_dir);

struct TokenizeOptions {
  int64_t threads = 0;                             // encoding threads; <= 0: every core
  std::function<void(const std::string&)> notice;  // one-line messages; null: none
  // Encoding's progress (bytes of the corpus done, of all), several times a second, instead of
  // a notice every two seconds; null: the notices.
  std::function<void(size_t bytes_done, size_t bytes_total)> progress{};
  // Tokenizer::to_json() of the tokenizer to use (`hwt train --init`'s); null: the one
  // data.tokenizer names, learned from the data where it is learned.
  const nlohmann::json* tokenizer = nullptr;
};

// Options for a command's tokenising on stderr: the token cache's lines (built, reused, stale)
// and `meter` following the encoding in MB; with `show` false, neither.
TokenizeOptions tokenize_with_meter(int64_t threads, ProgressMeter& meter, bool show);

// The ids of corpus.documents encoded by `tok` and joined by `separator` (encode_documents):
// mapped from the entry in `cache_dir` when it is current, else encoded and stored there.
// cache_dir "" encodes in memory; a folder that cannot be written does too, with a notice.
TokenStream cached_tokens(const Corpus& corpus, const Tokenizer& tok, int32_t separator,
                          const std::string& cache_dir, const TokenizeOptions& o);

}  // namespace hwt
