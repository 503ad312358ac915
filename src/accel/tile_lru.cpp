#include "accel/tile_lru.h"

namespace hwt::accel {

TileLru::TileLru(int64_t tiles, int64_t capacity)
    : prev_(static_cast<size_t>(tiles), -1),
      next_(static_cast<size_t>(tiles), -1),
      in_(static_cast<size_t>(tiles), 0),
      capacity_(capacity) {}

void TileLru::unlink(int64_t id) {
  const auto i = static_cast<size_t>(id);
  if (prev_[i] >= 0)
    next_[static_cast<size_t>(prev_[i])] = next_[i];
  else
    head_ = next_[i];
  if (next_[i] >= 0)
    prev_[static_cast<size_t>(next_[i])] = prev_[i];
  else
    tail_ = prev_[i];
  prev_[i] = next_[i] = -1;
}

void TileLru::push_front(int64_t id) {
  const auto i = static_cast<size_t>(id);
  prev_[i] = -1;
  next_[i] = head_;
  if (head_ >= 0) prev_[static_cast<size_t>(head_)] = id;
  head_ = id;
  if (tail_ < 0) tail_ = id;
}

bool TileLru::touch(int64_t id, int64_t* evicted) {
  *evicted = -1;
  const auto i = static_cast<size_t>(id);
  if (in_[i]) {
    if (head_ != id) {
      unlink(id);
      push_front(id);
    }
    return true;
  }
  if (capacity_ == 0) return false;
  if (capacity_ != kUnlimited && size_ == capacity_) {
    const int64_t victim = tail_;
    unlink(victim);
    in_[static_cast<size_t>(victim)] = 0;
    --size_;
    *evicted = victim;
  }
  push_front(id);
  in_[i] = 1;
  ++size_;
  return false;
}

}  // namespace hwt::accel
