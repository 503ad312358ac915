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
    const Key key(piece);
    const size_t mask = slots_.size() - 1;
    for (size_t i = key.hash & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (s.key_size == 0) return false;
      if (!matches(s, key, piece)) continue;
      if (s.id_count == 1) {
        out.push_back(static_cast<int32_t>(s.ids));
      } else {
        const auto first = ids_.begin() + s.ids;
        out.insert(out.end(), first, first + s.id_count);
      }
      return true;
    }
  }
  // Remembers that `piece` encodes to `ids` (count >= 1); a piece already cached is left as is.
  void add(std::string_view piece, const int32_t* ids, size_t count);
  size_t size() const { return count_; }

 private:
  // Pieces of up to kInlineBytes are compared in the slot, as two words that hold all their
  // bytes (overlapping loads: with the size, they tell any two such pieces apart); longer ones
  // against their bytes in bytes_.
  static constexpr size_t kInlineBytes = 16;
  static uint64_t load(const char* p, size_t bytes) {  // bytes: 4 or 8
    uint64_t v = 0;
    std::memcpy(&v, p, bytes);
    return v;
  }
  static uint64_t hash_words(uint64_t w0, uint64_t w1, size_t size) {
    uint64_t h = (w0 ^ (size * 0x9E3779B97F4A7C15ull)) * 0xBF58476D1CE4E5B9ull;
    h = (h ^ (h >> 31) ^ w1) * 0x94D049BB133111EBull;
    return h ^ (h >> 29);
  }
  struct Key {
    explicit Key(std::string_view piece) {
      const char* p = piece.data();
      const size_t n = piece.size();
      if (n > kInlineBytes) {
        hash = hash_bytes(piece);
        return;
      }
      if (n > 8) {
        w0 = load(p, 8);
        w1 = load(p + n - 8, 8);
      } else if (n >= 4) {
        w0 = load(p, 4) | load(p + n - 4, 4) << 32;
      } else if (n > 0) {
        w0 = uint64_t{static_cast<unsigned char>(p[0])} |
             uint64_t{static_cast<unsigned char>(p[n / 2])} << 8 |
             uint64_t{static_cast<unsigned char>(p[n - 1])} << 16;
      }
      hash = hash_words(w0, w1, n);
    }
    uint64_t w0 = 0, w1 = 0, hash = 0;
  };
  struct Slot {
    uint64_t w0 = 0, w1 = 0;  // Key's words (pieces of up to kInlineBytes)
    uint32_t key_offset = 0;  // into bytes_ (longer pieces)
    uint32_t ids = 0;         // the id itself when id_count is 1, else an offset into ids_
    uint16_t key_size = 0;    // 0: empty slot (pieces are never empty)
    uint16_t id_count = 0;
    uint32_t tag = 0;  // the hash's high half, to skip most unequal keys unread
  };
  bool matches(const Slot& s, const Key& key, std::string_view piece) const {
    if (s.key_size != piece.size() || s.tag != static_cast<uint32_t>(key.hash >> 32)) return false;
    if (piece.size() <= kInlineBytes) return s.w0 == key.w0 && s.w1 == key.w1;
    return std::memcmp(bytes_.data() + s.key_offset, piece.data(), piece.size()) == 0;
  }
  uint64_t hash_of(const Slot& s) const;
  void grow();

  std::vector<Slot> slots_;   // a power of two, at most half full
  std::vector<char> bytes_;   // the bytes of every cached piece longer than kInlineBytes
  std::vector<int32_t> ids_;  // the ids of every cached piece of more than one token
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
