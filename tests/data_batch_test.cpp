#include <gtest/gtest.h>

#include <numeric>
#include <set>

#include "data/char_tokenizer.h"
#include "data/dataset.h"

namespace hwt {
namespace {

// Example i has i + 1 tokens after [CLS], label i % 3 and tag i at every token.
Dataset joint_dataset(int n) {
  Dataset d;
  d.task = Task::Joint;
  for (int i = 0; i < n; ++i) {
    Example e;
    e.ids.push_back(Tokenizer::kCls);
    e.token_labels.push_back(-1);
    for (int k = 0; k <= i; ++k) {
      e.ids.push_back(10 + i);
      e.token_labels.push_back(i);
    }
    e.label = i % 3;
    d.train.examples.push_back(e);
  }
  return d;
}

std::vector<Batch> epoch(BatchIterator& it) {
  std::vector<Batch> out;
  Batch b;
  while (it.next(b)) out.push_back(b);
  return out;
}

bool same(const Batch& a, const Batch& b) {
  return a.batch == b.batch && a.seq == b.seq && a.ids == b.ids && a.lengths == b.lengths &&
         a.seq_labels == b.seq_labels && a.token_labels == b.token_labels;
}

std::vector<int32_t> ids_in_order(const std::vector<Batch>& batches) {
  std::vector<int32_t> out;
  for (const Batch& b : batches) out.insert(out.end(), b.ids.begin(), b.ids.end());
  return out;
}

TEST(DataBatch, PaddedToLongestInBatchWithLabels) {
  const Dataset d = joint_dataset(5);
  BatchIterator it(d, d.train, 2, 100, /*shuffle=*/false, 7);
  EXPECT_EQ(it.batches_per_epoch(), 3);
  const std::vector<Batch> batches = epoch(it);
  ASSERT_EQ(batches.size(), 3u);
  const Batch& b = batches[0];  // examples 0 and 1: 2 and 3 tokens
  EXPECT_EQ(b.batch, 2);
  EXPECT_EQ(b.seq, 3);
  EXPECT_EQ(b.ids, (std::vector<int32_t>{2, 10, 0, 2, 11, 11}));
  EXPECT_EQ(b.lengths, (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(b.seq_labels, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(b.token_labels, (std::vector<int32_t>{-1, 0, -1, -1, 1, 1}));
  EXPECT_EQ(b.tokens(), 5);
  EXPECT_EQ(Batch::count_valid(b.token_labels), 3);
  EXPECT_EQ(batches[2].batch, 1);  // the last partial batch is emitted
  EXPECT_EQ(batches[2].seq, 6);
  Batch after;
  EXPECT_FALSE(it.next(after));
}

TEST(DataBatch, CutsToMaxLenAndDropsUnusedLabels) {
  Dataset d = joint_dataset(4);
  BatchIterator cut(d, d.train, 4, 3, false, 7);
  Batch b;
  ASSERT_TRUE(cut.next(b));
  EXPECT_EQ(b.seq, 3);
  EXPECT_EQ(b.lengths, (std::vector<int32_t>{2, 3, 3, 3}));
  d.task = Task::Classify;
  BatchIterator classify(d, d.train, 4, 100, false, 7);
  ASSERT_TRUE(classify.next(b));
  EXPECT_TRUE(b.token_labels.empty());
  EXPECT_EQ(b.seq_labels.size(), 4u);
  d.task = Task::Tokens;
  BatchIterator tokens(d, d.train, 4, 100, false, 7);
  ASSERT_TRUE(tokens.next(b));
  EXPECT_TRUE(b.seq_labels.empty());
  EXPECT_EQ(b.token_labels.size(), b.ids.size());
}

TEST(DataBatch, OrderDependsOnlyOnSeedAndEpoch) {
  const Dataset d = joint_dataset(50);
  BatchIterator a(d, d.train, 8, 100, true, 42), b(d, d.train, 8, 100, true, 42);
  a.start_epoch(3);
  b.start_epoch(3);
  const auto ea = epoch(a), eb = epoch(b);
  ASSERT_EQ(ea.size(), eb.size());
  for (size_t i = 0; i < ea.size(); ++i) EXPECT_TRUE(same(ea[i], eb[i])) << i;
  b.start_epoch(4);
  EXPECT_NE(ids_in_order(ea), ids_in_order(epoch(b)));
  BatchIterator other_seed(d, d.train, 8, 100, true, 43);
  other_seed.start_epoch(3);
  EXPECT_NE(ids_in_order(ea), ids_in_order(epoch(other_seed)));
  // Every example appears once per epoch.
  std::multiset<int32_t> seen;
  for (const Batch& batch : ea) seen.insert(batch.seq_labels.begin(), batch.seq_labels.end());
  EXPECT_EQ(seen.size(), 50u);
}

TEST(DataBatch, SeekResumesExactly) {
  const Dataset d = joint_dataset(30);
  BatchIterator a(d, d.train, 4, 100, true, 9);
  a.start_epoch(2);
  const auto full = epoch(a);
  BatchIterator b(d, d.train, 4, 100, true, 9);
  b.seek(2, 3);
  EXPECT_EQ(b.epoch(), 2);
  EXPECT_EQ(b.position(), 3);
  const auto rest = epoch(b);
  ASSERT_EQ(rest.size() + 3, full.size());
  for (size_t i = 0; i < rest.size(); ++i) EXPECT_TRUE(same(rest[i], full[i + 3])) << i;
}

TEST(DataBatch, WordDropoutReplacesTokensWithUnkButNotPadOrCls) {
  const Dataset d = joint_dataset(60);
  BatchIterator plain(d, d.train, 8, 100, true, 5), dropped(d, d.train, 8, 100, true, 5);
  dropped.set_word_dropout(0.3);
  const auto a = epoch(plain), b = epoch(dropped);
  ASSERT_EQ(a.size(), b.size());
  int64_t words = 0, unk = 0;
  for (size_t k = 0; k < a.size(); ++k) {
    EXPECT_EQ(a[k].token_labels, b[k].token_labels);  // labels untouched
    for (size_t i = 0; i < a[k].ids.size(); ++i) {
      const int32_t was = a[k].ids[i], now = b[k].ids[i];
      if (was == Tokenizer::kPad || was == Tokenizer::kCls) {
        EXPECT_EQ(now, was);
        continue;
      }
      ++words;
      if (now == Tokenizer::kUnk)
        ++unk;
      else
        EXPECT_EQ(now, was);
    }
  }
  EXPECT_NEAR(static_cast<double>(unk) / static_cast<double>(words), 0.3, 0.03) << words;
  // Resuming mid-epoch draws the same replacements.
  BatchIterator resumed(d, d.train, 8, 100, true, 5);
  resumed.set_word_dropout(0.3);
  resumed.seek(0, 2);
  const auto rest = epoch(resumed);
  for (size_t i = 0; i < rest.size(); ++i) EXPECT_TRUE(same(rest[i], b[i + 2])) << i;
}

Dataset lm_dataset(int n, int64_t window) {
  Dataset d;
  d.task = Task::Lm;
  std::vector<int32_t> ids(static_cast<size_t>(n));
  std::iota(ids.begin(), ids.end(), 0);
  d.train.stream = std::move(ids);
  d.train.window = window;
  return d;
}

TEST(DataBatch, LmWindowsAndShiftedTargets) {
  const Dataset d = lm_dataset(100, 8);
  EXPECT_EQ(d.train.size(), 12);  // (100 - 1) / 8
  BatchIterator eval(d, d.train, 5, 8, /*shuffle=*/false, 1);
  EXPECT_EQ(eval.batches_per_epoch(), 3);
  const auto batches = epoch(eval);
  EXPECT_EQ(batches[0].ids[8], 8);  // window 1 starts at 8 (phase 0)
  for (const Batch& b : batches) {
    EXPECT_EQ(b.seq, 8);
    EXPECT_TRUE(b.seq_labels.empty());
    for (int32_t l : b.lengths) EXPECT_EQ(l, 8);
    for (size_t k = 0; k < b.ids.size(); ++k) {
      EXPECT_EQ(b.token_labels[k], b.ids[k] + 1);
      if (k % 8 == 0) {
        EXPECT_EQ(b.ids[k] % 8, 0);
      }
    }
  }
}

TEST(DataBatch, LmTrainingPhaseVariesButBatchCountDoesNot) {
  const Dataset d = lm_dataset(101, 8);
  BatchIterator it(d, d.train, 4, 8, true, 5);
  std::set<int32_t> phases;
  const int64_t per_epoch = it.batches_per_epoch();
  for (int64_t e = 0; e < 20; ++e) {
    it.start_epoch(e);
    EXPECT_EQ(it.batches_per_epoch(), per_epoch);
    std::set<int32_t> starts;
    for (const Batch& b : epoch(it)) {
      for (int64_t r = 0; r < b.batch; ++r) {
        const int32_t start = b.ids[static_cast<size_t>(r * 8)];
        starts.insert(start);
        EXPECT_EQ(b.token_labels[static_cast<size_t>(r * 8 + 7)], start + 8);  // in bounds
        EXPECT_LE(start + 8, 100);
      }
    }
    EXPECT_EQ(std::ssize(starts), 11);  // 101 / 8 - 1 windows, all distinct
    phases.insert(*starts.begin() % 8);
  }
  EXPECT_GT(phases.size(), 3u);
}

TEST(DataBatch, LmTooShortHasNoWindows) {
  const Dataset d = lm_dataset(8, 8);
  EXPECT_EQ(d.train.size(), 0);
  BatchIterator it(d, d.train, 4, 8, true, 5);
  EXPECT_EQ(it.batches_per_epoch(), 0);
  Batch b;
  EXPECT_FALSE(it.next(b));
}

TEST(DataBatch, LmFromTextFile) {
  DataConfig c;
  c.format = DataFormat::Text;
  c.tokenizer = TokenizerKind::Char;
  c.path = HWT_TEST_DIR "/fixtures/data/tiny.txt";  // 11 bytes
  c.max_len = 4;
  c.valid_fraction = 0;
  c.test_fraction = 0;
  const Dataset d = load_dataset(c, Task::Lm);
  EXPECT_EQ(d.tokenizer->vocab_size(), 9);
  EXPECT_EQ(d.train.stream.size(), 11u);
  EXPECT_EQ(d.train.size(), 2);
  BatchIterator it(d, d.train, 8, 4, false, 1);
  Batch b;
  ASSERT_TRUE(it.next(b));
  EXPECT_EQ(d.tokenizer->decode(b.ids), "abc\nab c");
}

}  // namespace
}  // namespace hwt
