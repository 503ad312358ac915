#include "data/piece_cache.h"

#include <algorithm>
#include <functional>
#include <thread>

namespace hwt {

uint64_t PieceCache::hash_of(const Slot& s) const {
  return s.key_size > kInlineBytes ? hash_bytes({bytes_.data() + s.key_offset, s.key_size})
                                   : hash_words(s.w0, s.w1, s.key_size);
}

void PieceCache::grow() {
  const size_t size = slots_.empty() ? 4096 : slots_.size() * 2;
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(size, Slot{});
  const size_t mask = size - 1;
  for (const Slot& s : old) {
    if (s.key_size == 0) continue;
    size_t i = hash_of(s) & mask;
    while (slots_[i].key_size != 0) i = (i + 1) & mask;
    slots_[i] = s;
  }
}

void PieceCache::add(std::string_view piece, const int32_t* ids, size_t count) {
  if (piece.empty() || piece.size() > kMaxPieceBytes || count == 0 || count > UINT16_MAX) return;
  if (count_ >= kMaxPieces) {
    std::fill(slots_.begin(), slots_.end(), Slot{});
    bytes_.clear();
    ids_.clear();
    count_ = 0;
  }
  if ((count_ + 1) * 2 > slots_.size()) grow();
  const Key key(piece);
  const size_t mask = slots_.size() - 1;
  size_t i = key.hash & mask;
  for (; slots_[i].key_size != 0; i = (i + 1) & mask)
    if (matches(slots_[i], key, piece)) return;
  Slot& s = slots_[i];
  s = {key.w0,
       key.w1,
       0,
       0,
       static_cast<uint16_t>(piece.size()),
       static_cast<uint16_t>(count),
       static_cast<uint32_t>(key.hash >> 32)};
  if (piece.size() > kInlineBytes) {
    s.key_offset = static_cast<uint32_t>(bytes_.size());
    bytes_.insert(bytes_.end(), piece.begin(), piece.end());
  }
  if (count == 1) {
    s.ids = static_cast<uint32_t>(ids[0]);
  } else {
    s.ids = static_cast<uint32_t>(ids_.size());
    ids_.insert(ids_.end(), ids, ids + count);
  }
  ++count_;
}

PieceCachePool::~PieceCachePool() {
  for (Slot& s : slots_) delete s.cache.load();
}

PieceCachePool::Lease PieceCachePool::lease() const {
  const size_t home = std::hash<std::thread::id>{}(std::this_thread::get_id()) % kSlots;
  for (size_t k = 0; k < kSlots; ++k) {
    std::atomic<PieceCache*>& slot = slots_[(home + k) % kSlots].cache;
    if (slot.load(std::memory_order_relaxed) == nullptr) continue;
    if (PieceCache* cache = slot.exchange(nullptr, std::memory_order_acquire))
      return Lease(*this, home, std::unique_ptr<PieceCache>(cache));
  }
  return Lease(*this, home, std::make_unique<PieceCache>());
}

void PieceCachePool::put_back(size_t home, std::unique_ptr<PieceCache> cache) const {
  for (size_t k = 0; k < kSlots; ++k) {
    std::atomic<PieceCache*>& slot = slots_[(home + k) % kSlots].cache;
    PieceCache* empty = nullptr;
    if (slot.load(std::memory_order_relaxed) == nullptr &&
        slot.compare_exchange_strong(empty, cache.get(), std::memory_order_release)) {
      cache.release();
      return;
    }
  }
}  // every slot holds a cache: this one is dropped

}  // namespace hwt
