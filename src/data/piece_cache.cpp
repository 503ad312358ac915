#include "data/piece_cache.h"

namespace hwt {

void PieceCache::add(std::string_view piece, const int32_t* ids, size_t count) {
  if (piece.size() > kMaxPieceBytes) return;
  if (spans_.size() >= kMaxPieces) {
    spans_.clear();
    ids_.clear();
  }
  const Span span{static_cast<uint32_t>(ids_.size()), static_cast<uint32_t>(count)};
  if (spans_.emplace(std::string(piece), span).second) ids_.insert(ids_.end(), ids, ids + count);
}

}  // namespace hwt
