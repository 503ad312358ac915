#include <algorithm>
#include <numeric>

#include "core/error.h"
#include "core/philox.h"
#include "data/dataset.h"
#include "data/shuffle.h"

namespace hwt {
namespace {

// LM windows of one epoch: `count` windows of max_len tokens start at phase + k * max_len, each
// with its next-token target, for any phase below `phases`.
struct LmWindows {
  int64_t count = 0, phases = 1;
};

LmWindows lm_windows(int64_t tokens, int64_t max_len, bool shuffle) {
  LmWindows w;
  if (tokens < max_len + 1) return w;
  w.count = (tokens - 1) / max_len;
  // Training shifts the windows by a random phase each epoch so every position is sometimes a
  // window start. Dropping one window lets any phase in [0, max_len) fit, which keeps the
  // number of batches the same every epoch; a stream too short for that keeps its slack.
  if (shuffle) {
    if (tokens / max_len >= 2) w.count = tokens / max_len - 1;
    w.phases = std::min(max_len, tokens - w.count * max_len);
  }
  return w;
}

}  // namespace

BatchIterator::BatchIterator(const Dataset& data, const Split& split, int64_t batch_size,
                             int64_t max_len, bool shuffle, uint64_t seed)
    : data_(data),
      split_(split),
      batch_size_(batch_size),
      max_len_(max_len),
      shuffle_(shuffle),
      seed_(seed) {
  HWT_CHECK(batch_size > 0 && max_len > 0, "batch_size={} max_len={}", batch_size, max_len);
  start_epoch(0);
}

void BatchIterator::start_epoch(int64_t epoch) {
  epoch_ = epoch;
  position_ = 0;
  SplitMix64 rng = seeded_rng(seed_, static_cast<uint64_t>(epoch));
  int64_t count = std::ssize(split_.examples);
  phase_ = 0;
  if (data_.task == Task::Lm) {
    const LmWindows w = lm_windows(std::ssize(split_.stream), max_len_, shuffle_);
    count = w.count;
    phase_ = static_cast<int64_t>(rng.below(static_cast<uint64_t>(w.phases)));
  }
  order_.resize(static_cast<size_t>(count));
  std::iota(order_.begin(), order_.end(), 0);
  if (shuffle_) shuffle_in_place(order_, rng);
}

void BatchIterator::seek(int64_t epoch, int64_t position) {
  start_epoch(epoch);
  if (position < 0 || position > batches_per_epoch())
    fail_input("data position {} is outside epoch {} of {} batches", position, epoch,
               batches_per_epoch());
  position_ = position;
}

void BatchIterator::set_shard(int64_t rank, int64_t ranks) {
  HWT_CHECK(ranks >= 1 && rank >= 0 && rank < ranks, "shard {} of {}", rank, ranks);
  shard_rank_ = rank;
  shard_ranks_ = ranks;
}

int64_t BatchIterator::batches_per_epoch() const {
  const int64_t n = std::ssize(order_);
  const int64_t last = n % batch_size_;
  return n / batch_size_ + (last >= shard_ranks_ ? 1 : 0);
}

bool BatchIterator::next(Batch& out) {
  if (position_ >= batches_per_epoch()) return false;
  const int64_t global_first = position_ * batch_size_;
  const int64_t total = std::min(batch_size_, std::ssize(order_) - global_first);
  const int64_t first = global_first + total * shard_rank_ / shard_ranks_;
  const int64_t b = global_first + total * (shard_rank_ + 1) / shard_ranks_ - first;
  share_ = static_cast<double>(b) / static_cast<double>(total);
  const auto index = [&](int64_t i) { return order_[static_cast<size_t>(first + i)]; };
  const Task task = data_.task;
  out.batch = b;
  out.lengths.resize(static_cast<size_t>(b));
  if (task == Task::Lm) {
    // ids = a window of the stream, token_labels = the same window one token later.
    out.seq = max_len_;
    out.ids.resize(static_cast<size_t>(b * max_len_));
    out.token_labels.resize(out.ids.size());
    out.seq_labels.clear();
    for (int64_t i = 0; i < b; ++i) {
      const int64_t start = phase_ + index(i) * max_len_;
      const auto row = static_cast<size_t>(i * max_len_);
      split_.stream.read(start, max_len_, out.ids.data() + row);
      split_.stream.read(start + 1, max_len_, out.token_labels.data() + row);
      out.lengths[static_cast<size_t>(i)] = static_cast<int32_t>(max_len_);
    }
  } else {
    const auto example = [&](int64_t i) -> const Example& {
      return split_.examples[static_cast<size_t>(index(i))];
    };
    const auto length = [&](int64_t i) { return std::min(std::ssize(example(i).ids), max_len_); };
    out.seq = 1;
    for (int64_t i = 0; i < b; ++i) out.seq = std::max(out.seq, length(i));
    // The tokenizer's [PAD] (a dataset made without a tokenizer, in tests, uses kPad).
    const int32_t pad = data_.tokenizer ? data_.tokenizer->pad_id() : Tokenizer::kPad;
    out.ids.assign(static_cast<size_t>(b * out.seq), pad);
    const bool seq_task = task == Task::Classify || task == Task::Joint;
    const bool token_task = task == Task::Tokens || task == Task::Joint;
    if (seq_task)
      out.seq_labels.resize(static_cast<size_t>(b));
    else
      out.seq_labels.clear();
    if (token_task)
      out.token_labels.assign(out.ids.size(), -1);
    else
      out.token_labels.clear();
    for (int64_t i = 0; i < b; ++i) {
      const Example& e = example(i);
      const int64_t len = length(i);
      const auto row = static_cast<ptrdiff_t>(i * out.seq);
      std::copy(e.ids.begin(), e.ids.begin() + len, out.ids.begin() + row);
      out.lengths[static_cast<size_t>(i)] = static_cast<int32_t>(len);
      if (seq_task) out.seq_labels[static_cast<size_t>(i)] = e.label;
      if (token_task)
        std::copy(e.token_labels.begin(), e.token_labels.begin() + len,
                  out.token_labels.begin() + row);
    }
  }
  if (word_dropout_ > 0) drop_words(out);
  ++position_;
  return true;
}

void BatchIterator::drop_words(Batch& out) const {
  const uint64_t key = mix_seed(mix_seed(seed_ ^ 0x776f7264ull) + static_cast<uint64_t>(epoch_));
  const uint64_t base = static_cast<uint64_t>(position_ * batch_size_ * max_len_);
  const Tokenizer* t = data_.tokenizer.get();
  const int32_t pad = t ? t->pad_id() : Tokenizer::kPad, cls = t ? t->cls_id() : Tokenizer::kCls,
                unk = t ? t->unk_id() : Tokenizer::kUnk, sep = t ? t->sep_id() : -1;
  for (size_t i = 0; i < out.ids.size(); ++i) {
    int32_t& id = out.ids[i];
    if (id != pad && id != cls && id != sep && philox_uniform(key, base + i) < word_dropout_)
      id = unk;
  }
}

}  // namespace hwt
