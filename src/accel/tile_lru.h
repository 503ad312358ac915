// Which tiles of one operand are in its buffer share: least-recently-used replacement over a
// fixed set of tile ids, O(1) per access (an intrusive list over dense arrays, no hashing).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hwt::accel {

class TileLru {
 public:
  static constexpr int64_t kUnlimited = -1;

  // `capacity` tiles (0: nothing stays, kUnlimited: everything stays).
  TileLru(int64_t tiles, int64_t capacity);

  // Marks `id` most recently used. Returns whether it was resident; on a miss it becomes
  // resident (capacity allowing) and the tile evicted to make room, if any, goes to *evicted.
  bool touch(int64_t id, int64_t* evicted);
  bool resident(int64_t id) const { return in_[static_cast<size_t>(id)] != 0; }

 private:
  void unlink(int64_t id);
  void push_front(int64_t id);

  std::vector<int64_t> prev_, next_;
  std::vector<uint8_t> in_;
  int64_t head_ = -1, tail_ = -1, size_ = 0, capacity_;
};

}  // namespace hwt::accel
