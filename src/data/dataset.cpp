#include "data/dataset.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>

#include "core/error.h"
#include "core/paths.h"
#include "data/lm_dataset.h"
#include "data/partition.h"
#include "data/raw_data.h"

namespace hwt {
namespace {

void check_compatible(DataFormat f, Task t) {
  if (is_lm_format(f) && t != Task::Lm)
    fail_input(
        "config data.format={} is for language modelling: it needs model.head=lm (got "
        "model.head={})",
        format_name(f), task_name(t));
  if (t == Task::Lm && !is_lm_format(f))
    fail_input("config model.head=lm needs data.format=text or sotu (got data.format={})",
               format_name(f));
  if (has_token_labels(t) && f != DataFormat::JointBert)
    fail_input(
        "config model.head={} needs token labels, which only data.format=jointbert "
        "provides (got data.format={})",
        task_name(t), format_name(f));
}

// Training labels in sorted order; with data.unseen_labels="unk", LabelSet::kUnseen after them
// (see labels.h for why).
LabelSet training_labels(std::vector<std::string> names, const DataConfig& c) {
  LabelSet set = LabelSet::sorted(std::move(names));
  if (c.unseen_labels == UnseenLabels::Unk) set.add(std::string(LabelSet::kUnseen));
  return set;
}

int32_t label_id(const LabelSet& set, const std::string& name, const DataConfig& c,
                 const std::string& file, int64_t line) {
  if (const int32_t id = set.id(name); id >= 0) return id;
  if (c.unseen_labels == UnseenLabels::Unk) return set.id(std::string(LabelSet::kUnseen));
  fail_input(
      "label '{}' in {}{} was not seen in training (set data.unseen_labels=\"unk\" to "
      "score it as wrong)",
      name, file, line > 0 ? fmt::format(" line {}", line) : "");
}

Example encode(const RawExample& r, const Dataset& d, const DataConfig& c) {
  Example e;
  if (has_sequence_labels(d.task)) e.label = label_id(d.labels, r.label, c, *r.label_file, r.line);
  if (!has_token_labels(d.task)) {
    // The tokenizer's own [CLS] (and [SEP] for BERT's WordPiece).
    e.ids = d.tokenizer->encode_example(r.text, c.max_len);
    return e;
  }
  // Token labels: word tokenizers only (run_config.cpp), one token per word and no [SEP].
  e.ids.push_back(d.tokenizer->cls_id());
  const std::vector<int32_t> tokens = d.tokenizer->encode(r.text);
  e.ids.insert(e.ids.end(), tokens.begin(), tokens.end());
  HWT_CHECK(r.tags.size() == tokens.size(), "{} tags for {} tokens", r.tags.size(), tokens.size());
  e.token_labels.push_back(-1);
  for (const std::string& tag : r.tags)
    e.token_labels.push_back(label_id(d.token_labels, tag, c, *r.tags_file, r.line));
  e.token_labels.resize(std::min<size_t>(e.token_labels.size(), static_cast<size_t>(c.max_len)));
  e.ids.resize(std::min<size_t>(e.ids.size(), static_cast<size_t>(c.max_len)));
  return e;
}

// A relative data path that does not exist from here is looked up among the files shipped with
// hwt, so `--config atis` reads the project's data/atis from any working directory.
std::string shipped_or_given(const std::string& path) {
  std::error_code ec;
  if (path.empty() || path.front() == '/' || std::filesystem::exists(path, ec)) return path;
  return find_shipped_file(path).value_or(path);
}

}  // namespace

int64_t Split::size() const {
  if (window == 0) return std::ssize(examples);
  return std::ssize(stream) > window ? (std::ssize(stream) - 1) / window : 0;
}

Dataset load_dataset(const DataConfig& config, Task task, const TokenizeOptions& o) {
  DataConfig c = config;
  for (std::string* path : {&c.path, &c.valid_path, &c.test_path, &c.vocab})
    *path = shipped_or_given(*path);
  check_compatible(c.format, task);
  if (task == Task::Lm) return load_lm_dataset(c, o);
  RawSplits raw = c.format == DataFormat::Spam ? read_spam(c)
                  : c.format == DataFormat::JointBert
                      ? read_jointbert(c, has_sequence_labels(task), has_token_labels(task))
                      : read_table(c);
  for (auto* split : {&raw.train, &raw.valid, &raw.test}) keep_first(*split, c.max_examples);
  if (raw.train.empty()) fail_input("no training examples in {}", raw.source);

  Dataset d;
  d.task = task;
  std::vector<std::string_view> texts;
  std::vector<std::string> names, tags;
  for (const RawExample& r : raw.train) {
    texts.push_back(r.text);
    names.push_back(r.label);
    tags.insert(tags.end(), r.tags.begin(), r.tags.end());
  }
  d.tokenizer = train_tokenizer(c, texts, o.tokenizer);
  if (has_sequence_labels(task)) d.labels = training_labels(std::move(names), c);
  if (has_token_labels(task)) d.token_labels = training_labels(std::move(tags), c);
  const auto encode_all = [&](const std::vector<RawExample>& in, Split& out) {
    out.examples.reserve(in.size());
    for (const RawExample& r : in) out.examples.push_back(encode(r, d, c));
  };
  encode_all(raw.train, d.train);
  encode_all(raw.valid, d.valid);
  encode_all(raw.test, d.test);
  d.source = fmt::format("{} (train {}, valid {}, test {} examples)", raw.source, d.train.size(),
                         d.valid.size(), d.test.size());
  return d;
}

nlohmann::json Dataset::vocab_json() const {
  HWT_CHECK(tokenizer != nullptr, "vocab_json on a dataset without a tokenizer");
  return {{"task", task_name(task)},
          {"tokenizer", tokenizer->to_json()},
          {"labels", labels.to_json()},
          {"token_labels", token_labels.to_json()}};
}

Dataset dataset_from_vocab_json(const nlohmann::json& j, Task task) {
  try {
    if (!j.is_object()) fail_input("checkpoint vocabulary: expected a JSON object");
    const std::string stored = j.at("task").get<std::string>();
    if (stored != task_name(task))
      fail_input("checkpoint vocabulary is for model.head={}, not {}", stored, task_name(task));
    if (j.at("tokenizer").is_null())
      fail_input(
          "checkpoint has no tokenizer (imported from a Hugging Face folder without tokenizer "
          "files hwt reads, docs/interop.md)");
    Dataset d;
    d.task = task;
    d.tokenizer = Tokenizer::from_json(j.at("tokenizer"));
    d.labels = LabelSet::from_json(j.at("labels"));
    d.token_labels = LabelSet::from_json(j.at("token_labels"));
    return d;
  } catch (const nlohmann::json::exception& e) {
    fail_input("checkpoint vocabulary: {}", e.what());
  }
}

}  // namespace hwt
