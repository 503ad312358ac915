#include "data/merge_learner.h"

#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "core/error.h"

namespace hwt {
namespace {

uint64_t pair_key(int32_t left, int32_t right) {
  return static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32 | static_cast<uint32_t>(right);
}
int32_t left_of(uint64_t key) {
  return static_cast<int32_t>(key >> 32);
}
int32_t right_of(uint64_t key) {
  return static_cast<int32_t>(key & 0xFFFFFFFFu);
}

struct PairStats {
  int64_t count = 0;
  std::vector<uint32_t> words;  // words that held the pair when added (may no longer)
};

// A candidate in the queue: entries go stale when the pair's count changes, and are skipped
// when popped (a fresh entry was pushed with the new count).
struct Candidate {
  int64_t count;
  uint64_t key;
  // The queue's top is the largest: more frequent first, then the smaller (left, right).
  bool operator<(const Candidate& o) const {
    return count != o.count ? count < o.count : key > o.key;
  }
};

class Learner {
 public:
  Learner(std::vector<std::string> alphabet, std::vector<WordCount> words,
          const MergeLearnerOptions& o)
      : o_(o), words_(std::move(words)), stamp_(words_.size(), 0) {
    result_.symbols = std::move(alphabet);
    for (size_t id = 0; id < result_.symbols.size(); ++id) {
      const bool fresh = ids_.emplace(result_.symbols[id], static_cast<int32_t>(id)).second;
      HWT_CHECK(fresh, "the alphabet repeats a symbol");
    }
    for (uint32_t w = 0; w < words_.size(); ++w) {
      const WordCount& word = words_[w];
      for (int32_t s : word.symbols)
        HWT_CHECK(s >= 0 && s < std::ssize(result_.symbols),
                  "a word's symbol is not in the alphabet");
      for (size_t i = 0; i + 1 < word.symbols.size(); ++i) {
        PairStats& p = pairs_[pair_key(word.symbols[i], word.symbols[i + 1])];
        p.count += word.count;
        if (p.words.empty() || p.words.back() != w) p.words.push_back(w);
      }
    }
    for (const auto& [key, p] : pairs_) queue_.push({p.count, key});
  }

  LearnedMerges run() {
    while (std::ssize(result_.symbols) < o_.max_symbols && !queue_.empty()) {
      const Candidate top = queue_.top();
      queue_.pop();
      const auto it = pairs_.find(top.key);
      if (it == pairs_.end() || it->second.count != top.count) continue;  // stale
      if (top.count < o_.min_count) break;
      std::string text = joined_text(left_of(top.key), right_of(top.key));
      if (ids_.contains(text)) continue;  // never merged: its count never rises again
      merge(top.key, std::move(text));
      if (o_.progress && result_.merges.size() % 256 == 0) o_.progress(std::ssize(result_.merges));
    }
    if (o_.progress) o_.progress(std::ssize(result_.merges));
    return std::move(result_);
  }

 private:
  std::string joined_text(int32_t left, int32_t right) const {
    std::string_view r = result_.symbols[static_cast<size_t>(right)];
    const std::string_view prefix = o_.continuation_prefix;
    if (!prefix.empty() && r.starts_with(prefix)) r.remove_prefix(prefix.size());
    return result_.symbols[static_cast<size_t>(left)] + std::string(r);
  }

  void merge(uint64_t key, std::string text) {
    const int32_t a = left_of(key), b = right_of(key);
    const auto merged = static_cast<int32_t>(result_.symbols.size());
    ids_.emplace(text, merged);
    result_.symbols.push_back(std::move(text));
    result_.merges.push_back({a, b, merged});

    ++merge_stamp_;
    std::unordered_map<uint64_t, int64_t> delta;
    std::vector<int32_t> joined;
    const std::vector<uint32_t> holders = std::move(pairs_[key].words);
    for (uint32_t w : holders) {
      if (stamp_[w] == merge_stamp_) continue;  // listed twice
      stamp_[w] = merge_stamp_;
      WordCount& word = words_[w];
      const std::vector<int32_t>& s = word.symbols;
      joined.clear();
      for (size_t i = 0; i < s.size();) {
        const bool here = i + 1 < s.size() && s[i] == a && s[i + 1] == b;
        joined.push_back(here ? merged : s[i]);
        i += here ? 2 : 1;
      }
      if (joined.size() == s.size()) continue;  // no longer holds the pair
      for (size_t i = 0; i + 1 < s.size(); ++i) delta[pair_key(s[i], s[i + 1])] -= word.count;
      for (size_t i = 0; i + 1 < joined.size(); ++i) {
        const uint64_t k = pair_key(joined[i], joined[i + 1]);
        delta[k] += word.count;
        if (joined[i] == merged || joined[i + 1] == merged) {
          std::vector<uint32_t>& holders_of_k = pairs_[k].words;
          if (holders_of_k.empty() || holders_of_k.back() != w) holders_of_k.push_back(w);
        }
      }
      word.symbols.swap(joined);
    }
    for (const auto& [k, d] : delta) {
      if (d == 0) continue;
      PairStats& p = pairs_[k];
      p.count += d;
      HWT_CHECK(p.count >= 0, "a pair's count fell below zero");
      if (p.count > 0) queue_.push({p.count, k});
    }
    pairs_.erase(key);
  }

  const MergeLearnerOptions& o_;
  std::vector<WordCount> words_;
  std::vector<uint32_t> stamp_;  // the merge that last visited each word
  uint32_t merge_stamp_ = 0;
  std::unordered_map<uint64_t, PairStats> pairs_;
  std::priority_queue<Candidate> queue_;
  std::unordered_map<std::string, int32_t> ids_;
  LearnedMerges result_;
};

}  // namespace

LearnedMerges learn_merges(std::vector<std::string> alphabet, std::vector<WordCount> words,
                           const MergeLearnerOptions& options) {
  return Learner(std::move(alphabet), std::move(words), options).run();
}

}  // namespace hwt
