// Token ids of text pieces already encoded, so a repeated word costs one hash lookup instead of
// its byte-pair merges. Open addressing keyed by the piece's bytes, kept in the cache's own
// arena: a lookup hashes the piece and compares bytes, with no allocation. Bounded: it empties
// itself when it holds kMaxPieces pieces, and keeps no piece longer than kMaxPieceBytes (long
// runs rarely repeat). Not thread-safe: PieceCachePool gives each concurrent encoder its own.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

#include "data/hash_bytes.h"

namespace hwt {

class PieceCache {
 public:
  static constexpr size_t kMaxPieces = size_t{1} << 18;
  static constexpr size_t kMaxPieceBytes = 256;

  // Appends the cached ids of `piece` to `out`; false (nothing appended) when not cached.
  bool append(std::string_view piece, std::vector<int32_t>& out) const {
    if (slots_.empty() || piece.size() > kMaxPieceBytes) return false;
    const uint64_t h = hash_bytes(piece);
    const auto tag = static_cast<uint32_t>(h >> 32);
    const size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (s.key_size == 0) return false;
      if (s.tag == tag && s.key_size == piece.size() &&
          std::memcmp(bytes_.data() + s.key_offset, piece.data(), piece.size()) == 0) {
        if (s.id_count == 1) {
          out.push_back(ids_[s.ids_offset]);
        } else {
          const auto first = ids_.begin() + s.ids_offset;
          out.insert(out.end(), first, first + s.id_count);
        }
        return true;
      }
    }
  }
  // Remembers that `piece` encodes to `ids` (count >= 1); a piece already cached is left as is.
  void add(std::string_view piece, const int32_t* ids, size_t count);
  size_t size() const { return count_; }

 private:
  struct Slot {
    uint32_t tag = 0;         // the hash's high half, to skip most unequal keys unread
    uint32_t key_offset = 0;  // into bytes_
    uint32_t ids_offset = 0;  // into ids_
    uint16_t key_size = 0;    // 0: empty slot (pieces are never empty)
    uint16_t id_count = 0;
  };
  void grow();

  std::vector<Slot> slots_;   // a power of two, at most half full
  std::vector<char> bytes_;   // every cached piece's bytes, back to back
  std::vector<int32_t> ids_;  // every cached piece's ids, back to back
  size_t count_ = 0;
};

// Piece caches for encoders that run at the same time: each encode takes a cache for its
// duration and gives it back, so no cache is shared between threads and no lock is held while
// encoding. Taking and giving back are a few atomic exchanges on kSlots slots, each thread
// starting at its own slot (so it usually gets back the cache it warmed). With more than kSlots
// encoders at once, the extra ones get a fresh cache that is dropped afterwards.
class PieceCachePool {
 public:
  static constexpr size_t kSlots = 64;

  class Lease {
   public:
    Lease(const PieceCachePool& pool, size_t home, std::unique_ptr<PieceCache> cache)
        : pool_(pool), home_(home), cache_(std::move(cache)) {}
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() { pool_.put_back(home_, std::move(cache_)); }
    PieceCache& cache() const { return *cache_; }

   private:
    const PieceCachePool& pool_;
    size_t home_;
    std::unique_ptr<PieceCache> cache_;
  };

  PieceCachePool() = default;
  PieceCachePool(const PieceCachePool&) = delete;
  PieceCachePool& operator=(const PieceCachePool&) = delete;
  ~PieceCachePool();

  Lease lease() const;

 private:
  void put_back(size_t home, std::unique_ptr<PieceCache> cache) const;

  struct alignas(64) Slot {  // one cache line each: threads at different slots never contend
    std::atomic<PieceCache*> cache{nullptr};
  };
  mutable std::array<Slot, kSlots> slots_;
};

}  // namespace hwt
