#include "data/byte_pair_encoder.h"

#include <algorithm>
#include <functional>
#include <queue>

#include "core/error.h"

namespace hwt {

BytePairEncoder::BytePairEncoder(const std::array<int32_t, 256>& byte_ids,
                                 const std::vector<Merge>& merges, int64_t vocab_size)
    : byte_ids_(byte_ids) {
  std::vector<bool> made(static_cast<size_t>(vocab_size), false);
  const auto in_range = [&](int32_t id) { return id >= 0 && id < vocab_size; };
  for (int32_t id : byte_ids_) {
    if (!in_range(id) || made[static_cast<size_t>(id)])
      fail_input("BPE: byte token {} is out of range or repeated", id);
    made[static_cast<size_t>(id)] = true;
  }
  merges_.reserve(merges.size());
  for (size_t r = 0; r < merges.size(); ++r) {
    const Merge& m = merges[r];
    if (!in_range(m.left) || !in_range(m.right) || !in_range(m.merged))
      fail_input("BPE: merge {} names a token outside the vocabulary of {}", r, vocab_size);
    if (!made[static_cast<size_t>(m.left)] || !made[static_cast<size_t>(m.right)])
      fail_input("BPE: merge {} joins a token that no earlier merge makes", r);
    if (made[static_cast<size_t>(m.merged)])
      fail_input("BPE: merge {} makes token {}, which a byte or an earlier merge makes", r,
                 m.merged);
    made[static_cast<size_t>(m.merged)] = true;
    merges_.emplace(pair_key(m.left, m.right), RankedMerge{static_cast<int32_t>(r), m.merged});
  }
}

BytePairEncoder::BytePairEncoder(const std::array<int32_t, 256>& byte_ids,
                                 const std::vector<Merge>& merges, int64_t vocab_size, AnyOrder)
    : byte_ids_(byte_ids) {
  const auto in_range = [&](int32_t id) { return id >= 0 && id < vocab_size; };
  for (int32_t id : byte_ids_)
    if (!in_range(id)) fail_input("BPE: byte token {} is out of range", id);
  merges_.reserve(merges.size());
  for (size_t r = 0; r < merges.size(); ++r) {
    const Merge& m = merges[r];
    if (!in_range(m.left) || !in_range(m.right) || !in_range(m.merged))
      fail_input("BPE: merge {} names a token outside the vocabulary of {}", r, vocab_size);
    merges_.insert_or_assign(pair_key(m.left, m.right),
                             RankedMerge{static_cast<int32_t>(r), m.merged});
  }
}

const BytePairEncoder::RankedMerge* BytePairEncoder::find(int32_t left, int32_t right) const {
  const auto it = merges_.find(pair_key(left, right));
  return it == merges_.end() ? nullptr : &it->second;
}

void BytePairEncoder::encode(std::string_view piece, std::vector<int32_t>& out) const {
  if (piece.size() == 1) {
    out.push_back(byte_ids_[static_cast<unsigned char>(piece[0])]);
    return;
  }
  std::vector<int32_t> symbols(piece.size());
  for (size_t i = 0; i < piece.size(); ++i)
    symbols[i] = byte_ids_[static_cast<unsigned char>(piece[i])];
  merge(std::move(symbols), out);
}

void BytePairEncoder::merge(std::vector<int32_t> id, std::vector<int32_t>& out) const {
  const size_t n = id.size();
  if (n <= 1) {
    out.insert(out.end(), id.begin(), id.end());
    return;
  }
  // The word as a linked list of symbols; a symbol merged into its left neighbour is dead.
  constexpr uint32_t kNone = UINT32_MAX;
  std::vector<uint32_t> prev(n), next(n);
  for (size_t i = 0; i < n; ++i) {
    prev[i] = i == 0 ? kNone : static_cast<uint32_t>(i - 1);
    next[i] = i + 1 == n ? kNone : static_cast<uint32_t>(i + 1);
  }
  // Candidates ordered by (rank, position): all pairs of the lowest rank merge left to right,
  // as encoder.py's pass over the word does. A candidate whose symbols changed is skipped.
  struct Candidate {
    int32_t rank;
    uint32_t left;
    int32_t left_id, right_id, merged;
    bool operator>(const Candidate& o) const {
      return rank != o.rank ? rank > o.rank : left > o.left;
    }
  };
  std::vector<Candidate> storage;
  storage.reserve(n);
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap(std::greater<>{},
                                                                              std::move(storage));
  const auto offer = [&](uint32_t left) {
    if (left == kNone || next[left] == kNone) return;
    if (const RankedMerge* m = find(id[left], id[next[left]]))
      heap.push({m->rank, left, id[left], id[next[left]], m->merged});
  };
  for (uint32_t i = 0; i + 1 < n; ++i) offer(i);
  std::vector<bool> dead(n, false);
  while (!heap.empty()) {
    const Candidate c = heap.top();
    heap.pop();
    const uint32_t right = next[c.left];
    if (dead[c.left] || right == kNone || id[c.left] != c.left_id || id[right] != c.right_id)
      continue;
    id[c.left] = c.merged;
    dead[right] = true;
    next[c.left] = next[right];
    if (next[right] != kNone) prev[next[right]] = c.left;
    offer(prev[c.left]);
    offer(c.left);
  }
  for (uint32_t i = 0; i != kNone; i = next[i]) out.push_back(id[i]);
}

}  // namespace hwt
