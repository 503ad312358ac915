// Token ids of text pieces already encoded, so a repeated word costs one hash lookup instead of
// its byte-pair merges. Bounded: it empties itself when it holds kMaxPieces pieces, and keeps no
// piece longer than kMaxPieceBytes (long runs rarely repeat).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace hwt {

class PieceCache {
 public:
  static constexpr size_t kMaxPieces = size_t{1} << 18;
  static constexpr size_t kMaxPieceBytes = 256;

  // Appends the cached ids of `piece` to `out`; false (nothing appended) when not cached.
  bool append(std::string_view piece, std::vector<int32_t>& out) const {
    const auto it = spans_.find(piece);
    if (it == spans_.end()) return false;
    const auto first = ids_.begin() + it->second.offset;
    out.insert(out.end(), first, first + it->second.count);
    return true;
  }
  // Remembers that `piece` encodes to `ids`.
  void add(std::string_view piece, const int32_t* ids, size_t count);

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  struct Span {
    uint32_t offset, count;  // into ids_
  };
  std::unordered_map<std::string, Span, Hash, std::equal_to<>> spans_;
  std::vector<int32_t> ids_;  // every cached piece's ids, back to back
};

}  // namespace hwt
