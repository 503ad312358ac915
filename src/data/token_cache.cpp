#include "data/token_cache.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>

#include "core/error.h"
#include "core/fingerprint.h"
#include "core/paths.h"
#include "data/parallel_encode.h"
#include "data/token_shard.h"
#include "report/progress_meter.h"

namespace hwt {
namespace fs = std::filesystem;
namespace {

// The bytes of every document, each preceded by its length so that moving text from one
// document to the next changes the fingerprint, and the recipe that joined them.
uint64_t corpus_fingerprint(const Corpus& c, int32_t separator) {
  uint64_t h = fingerprint(fmt::format("{}\nseparator {}\n", c.recipe, separator));
  for (const std::string_view d : c.documents)
    h = fingerprint(d, fingerprint(fmt::format("{}:", d.size()), h));
  return h;
}

std::string file_label(std::string_view label) {
  std::string out;
  for (const char ch : label)
    out += std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '.' ? ch : '_';
  return out;
}

std::string megabytes(size_t bytes) {
  return fmt::format("{:.1f} MB", static_cast<double>(bytes) / 1e6);
}

// What encodes: the tokenizer's JSON names its vocabulary, and hwt's version stands for the
// code that encodes with it, so a release that changes an encoder does not reuse its ids.
std::string made_by(const Tokenizer& tok) {
  nlohmann::json j = tok.to_json();
  j.erase("text");  // an embedded file: its fingerprint names it
  j["hwt_version"] = HWT_VERSION;
  return j.dump();
}

std::string entry_path(const Corpus& corpus, const std::string& made_by_json,
                       const std::string& cache_dir) {
  const uint64_t key = fingerprint(corpus.location + "\n" + corpus.recipe + "\n" + made_by_json);
  return (fs::path(cache_dir) / fmt::format("{}-{:016x}.tokens", file_label(corpus.label), key))
      .string();
}

}  // namespace

std::string token_cache_dir(const std::string& configured) {
  if (configured == kTokenCacheOff) return "";
  if (!configured.empty()) return configured;
  return (fs::path(user_cache_dir()) / "tokens").string();
}

std::string token_cache_entry(const Corpus& corpus, const Tokenizer& tok,
                              const std::string& cache_dir) {
  return entry_path(corpus, made_by(tok), cache_dir);
}

TokenStream cached_tokens(const Corpus& corpus, const Tokenizer& tok, int32_t separator,
                          const std::string& cache_dir, const TokenizeOptions& o) {
  const auto say = [&](const std::string& line) {
    if (o.notice) o.notice(line);
  };
  const auto encode = [&] {
    const auto report = [&](const EncodeProgress& p) {
      if (o.progress) return o.progress(p.bytes_done, p.bytes_total);
      say(fmt::format("encoding {}: {} of {} in {:.0f} s ({:.0f} tokens/s)", corpus.label,
                      megabytes(p.bytes_done), megabytes(p.bytes_total), p.seconds,
                      static_cast<double>(p.tokens_done) / p.seconds));
    };
    return encode_documents(tok, corpus.documents, separator, o.threads, report,
                            o.progress ? 0.1 : 2.0);
  };
  if (cache_dir.empty()) return encode();

  const TokenShardIdentity identity{made_by(tok), corpus_fingerprint(corpus, separator)};
  const std::string path = entry_path(corpus, identity.tokenizer_json, cache_dir);
  OpenedShard found;
  try {
    found = open_token_shard(path, identity);
  } catch (const InputError& e) {  // unreadable: rebuilt like a corrupt one
    found.found = true;
    found.problem = e.what();
  }
  if (found.tokens) {
    say(fmt::format("token cache: reused {} ({} tokens)", path, found.tokens->size()));
    return *found.tokens;
  }
  if (found.found)
    say(fmt::format("token cache: {} is stale ({}); rebuilding it", path, found.problem));

  const auto start = std::chrono::steady_clock::now();
  const TokenStream ids = encode();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  try {
    std::error_code ec;
    fs::create_directories(cache_dir, ec);
    if (ec) fail("cannot create folder {}: {}", cache_dir, ec.message());
    write_token_shard(path, identity, tok.vocab_size(), ids);
  } catch (const Error& e) {
    say(fmt::format("token cache: not stored ({}); using the tokens in memory", e.what()));
    return ids;
  }
  say(fmt::format("token cache: built {} ({} tokens in {:.2f} s, {:.0f} tokens/s)", path,
                  ids.size(), seconds, static_cast<double>(ids.size()) / std::max(seconds, 1e-9)));
  // The stored shard rather than the ids in memory, so every run trains from the same mapping.
  if (OpenedShard stored = open_token_shard(path, identity); stored.tokens) return *stored.tokens;
  return ids;
}

TokenizeOptions tokenize_with_meter(int64_t threads, ProgressMeter& meter, bool show) {
  TokenizeOptions o{threads, nullptr};
  if (!show) return o;
  o.notice = [&meter](const std::string& line) {
    meter.finish();
    fmt::print(stderr, "{}\n", line);
  };
  o.progress = [&meter](size_t done, size_t total) {
    meter.update(static_cast<int64_t>(done / 1000000), static_cast<int64_t>(total / 1000000));
  };
  return o;
}

}  // namespace hwt
