#include "data/byte_pair_encoder.h"

#include <algorithm>
#include <bit>
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
  size_table(merges.size());
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
    insert(m.left, m.right, {static_cast<int32_t>(r), m.merged}, /*replace=*/false);
  }
}

BytePairEncoder::BytePairEncoder(const std::array<int32_t, 256>& byte_ids,
                                 const std::vector<Merge>& merges, int64_t vocab_size, AnyOrder)
    : byte_ids_(byte_ids) {
  const auto in_range = [&](int32_t id) { return id >= 0 && id < vocab_size; };
  for (int32_t id : byte_ids_)
    if (!in_range(id)) fail_input("BPE: byte token {} is out of range", id);
  size_table(merges.size());
  for (size_t r = 0; r < merges.size(); ++r) {
    const Merge& m = merges[r];
    if (!in_range(m.left) || !in_range(m.right) || !in_range(m.merged))
      fail_input("BPE: merge {} names a token outside the vocabulary of {}", r, vocab_size);
    insert(m.left, m.right, {static_cast<int32_t>(r), m.merged}, /*replace=*/true);
  }
}

void BytePairEncoder::size_table(size_t merges) {
  const size_t size = std::bit_ceil(std::max<size_t>(16, merges * 2));
  slots_.assign(size, Slot{});
  shift_ = 64 - std::countr_zero(size);
}

void BytePairEncoder::insert(int32_t left, int32_t right, RankedMerge merge, bool replace) {
  const uint64_t key = pair_key(left, right);
  const size_t mask = slots_.size() - 1;
  size_t i = (key * 0x9E3779B97F4A7C15ull) >> shift_;
  while (slots_[i].key != kEmpty && slots_[i].key != key) i = (i + 1) & mask;
  if (slots_[i].key == kEmpty || replace) slots_[i] = {key, merge};
}

void BytePairEncoder::encode(std::string_view piece, std::vector<int32_t>& out) const {
  const size_t n = piece.size();
  if (n == 1) {
    out.push_back(byte_ids_[static_cast<unsigned char>(piece[0])]);
  } else if (n <= kShortPiece) {
    std::array<int32_t, kShortPiece> symbols;
    for (size_t i = 0; i < n; ++i) symbols[i] = byte_ids_[static_cast<unsigned char>(piece[i])];
    merge_short(symbols.data(), n, out);
  } else {
    encode_long(piece, out);
  }
}

void BytePairEncoder::encode_long(std::string_view piece, std::vector<int32_t>& out) const {
  std::vector<int32_t> symbols(piece.size());
  for (size_t i = 0; i < piece.size(); ++i)
    symbols[i] = byte_ids_[static_cast<unsigned char>(piece[i])];
  merge_long(std::move(symbols), out);
}

void BytePairEncoder::merge(std::vector<int32_t> symbols, std::vector<int32_t>& out) const {
  if (symbols.size() <= kShortPiece)
    merge_short(symbols.data(), symbols.size(), out);
  else
    merge_long(std::move(symbols), out);
}

void BytePairEncoder::merge_short(const int32_t* symbols, size_t n,
                                  std::vector<int32_t>& out) const {
  // id[i] the word's symbols; rank[i], merged[i]: the merge of symbols i and i + 1. Each step
  // merges the leftmost pair of the lowest rank (with GPT-2's merge list, what merging every
  // pair of that rank left to right does, since a merge never makes a pair of its own rank or
  // lower).
  std::array<int32_t, kShortPiece> id, rank, merged;
  std::copy(symbols, symbols + n, id.begin());
  const auto look_up = [&](size_t i) {
    const RankedMerge m = find(id[i], id[i + 1]);
    rank[i] = m.rank;
    merged[i] = m.merged;
  };
  for (size_t i = 0; i + 1 < n; ++i) look_up(i);
  while (n > 1) {
    size_t best = 0;
    for (size_t i = 1; i + 1 < n; ++i)
      if (rank[i] < rank[best]) best = i;
    if (rank[best] == kNoRank) break;
    id[best] = merged[best];
    for (size_t i = best + 1; i + 1 < n; ++i) {  // the right symbol leaves the word
      id[i] = id[i + 1];
      rank[i] = rank[i + 1];
      merged[i] = merged[i + 1];
    }
    --n;
    if (best > 0) look_up(best - 1);
    if (best + 1 < n) look_up(best);
  }
  out.insert(out.end(), id.begin(), id.begin() + static_cast<ptrdiff_t>(n));
}

void BytePairEncoder::merge_long(std::vector<int32_t> id, std::vector<int32_t>& out) const {
  const size_t n = id.size();
  if (n == 0) return;
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
    if (const RankedMerge m = find(id[left], id[next[left]]); m.rank != kNoRank)
      heap.push({m.rank, left, id[left], id[next[left]], m.merged});
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
