// Dataset: the tokenizer, label sets and encoded splits a run trains and evaluates on.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "config/data_config.h"
#include "config/model_config.h"
#include "data/batch.h"
#include "data/labels.h"
#include "data/token_cache.h"
#include "data/token_stream.h"
#include "data/tokenizer.h"

namespace hwt {

// One encoded example. ids start with the tokenizer's [CLS] for every task but LM (and end with
// its [SEP] when it has one: WordPiece); token_labels align with ids (-1 where nothing is
// predicted, e.g. at [CLS]).
struct Example {
  std::vector<int32_t> ids;
  int32_t label = -1;
  std::vector<int32_t> token_labels;
};

struct Split {
  std::vector<Example> examples;  // classification-style tasks
  TokenStream stream;             // LM: the split's whole token stream
  int64_t window = 0;             // LM: data.max_len, the window size() counts in
  int64_t size() const;           // examples, or LM windows of data.max_len tokens
};

struct Dataset {
  Task task = Task::Classify;
  std::unique_ptr<Tokenizer> tokenizer;
  LabelSet labels;        // sequence classes
  LabelSet token_labels;  // token classes
  Split train, valid, test;
  std::string source;  // where it came from, for run.json

  // What predict/eval need to rebuild the tokenizer and labels from a checkpoint.
  nlohmann::json vocab_json() const;
};

// Loads, cleans, splits and encodes the dataset named by the config. Bad files raise InputError.
// LM streams are encoded (on o.threads threads) into data.cache_dir's token cache or read from
// it; o.notice hears what the cache did.
Dataset load_dataset(const DataConfig& config, Task task, const TokenizeOptions& o = {});

// Rebuilds the tokenizer and label sets stored by vocab_json() (splits stay empty).
Dataset dataset_from_vocab_json(const nlohmann::json& j, Task task);

// Where `hwt train` finds its default dataset (installed by scripts/setup.sh).
std::string default_dataset_path();

// Deterministic batches over one split. The order is a function of (seed, epoch) only, so a
// resumed run continues exactly: state is (epoch, position).
class BatchIterator {
 public:
  BatchIterator(const Dataset& data, const Split& split, int64_t batch_size, int64_t max_len,
                bool shuffle, uint64_t seed);
  // Fills the next batch of the current epoch; false at the end of the epoch.
  bool next(Batch& out);
  void start_epoch(int64_t epoch);  // reshuffles for that epoch
  int64_t epoch() const { return epoch_; }
  int64_t position() const { return position_; }
  void seek(int64_t epoch, int64_t position);
  int64_t batches_per_epoch() const;
  // Replaces each input token (not [PAD], [CLS] or [SEP]) by the tokenizer's [UNK] with probability
  // p, drawn from (seed, epoch, position), so the model learns to use context for words it never
  // saw.
  void set_word_dropout(double p) { word_dropout_ = p; }
  // Data parallel: batch_size is the global batch; each batch is split into `ranks` contiguous
  // slices as even as they can be, and next() fills `rank`'s. An epoch's last batch is dropped
  // when it has fewer examples than ranks. Every rank sees the same order.
  void set_shard(int64_t rank, int64_t ranks);
  // The last batch's share of its global batch (its examples / the global batch's); 1 unsharded.
  double share() const { return share_; }

 private:
  const Dataset& data_;
  const Split& split_;
  int64_t batch_size_, max_len_;
  bool shuffle_;
  uint64_t seed_;
  int64_t epoch_ = 0, position_ = 0;
  std::vector<int64_t> order_;  // example (or LM window) indices of this epoch
  int64_t phase_ = 0;           // LM: window start offset of this epoch
  double word_dropout_ = 0;
  int64_t shard_rank_ = 0, shard_ranks_ = 1;
  double share_ = 1;
  void drop_words(Batch& out) const;
};

}  // namespace hwt
