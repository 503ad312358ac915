// Where the data comes from and how it is tokenised: the config keys under [data].
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace hwt {

enum class DataFormat : uint8_t { Spam, JointBert, Tsv, Csv, Jsonl, Text, Sotu };
std::string_view format_name(DataFormat f);  // the data.format value: "spam", "jointbert", ...
// Formats read as one token stream for language modelling (model.head = "lm"): text, sotu.
bool is_lm_format(DataFormat f);

enum class TokenizerKind : uint8_t { Word, Char, Gpt2, WordPiece, Hf };
enum class UnseenLabels : uint8_t { Error, Unk };

struct DataConfig {
  DataFormat format = DataFormat::Spam;
  std::string path;        // dataset file or folder; "" = the default (installed) dataset
  std::string valid_path;  // optional explicit validation file (tsv/csv/jsonl/text)
  std::string test_path;   // optional explicit test file
  std::string text_field = "text";
  std::string label_field = "label";
  TokenizerKind tokenizer = TokenizerKind::Word;
  std::string vocab;  // wordpiece: BERT's vocab.txt; hf: a tokenizer.json (found as data.path is)
  bool lowercase = true;
  int64_t min_freq = 2;
  int64_t max_vocab = 20000;
  int64_t max_len = 64;  // tokens per example including [CLS]; LM: context length
  double valid_fraction = 0.1;
  double test_fraction = 0.1;
  UnseenLabels unseen_labels = UnseenLabels::Error;
  double word_dropout = 0;   // training inputs only
  int64_t max_examples = 0;  // 0: all
  int64_t seed = 1234;       // split and shuffle seed
  // LM token shards: "" = the user's cache folder (user_cache_dir()/tokens), "off" = none.
  std::string cache_dir;
};

}  // namespace hwt
