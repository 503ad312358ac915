#include "data/token_stream.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"

namespace hwt {

TokenStream::TokenStream(std::vector<int32_t> ids) {
  auto held = std::make_shared<const std::vector<int32_t>>(std::move(ids));
  ids_ = held->data();
  size_ = held->size();
  owner_ = std::move(held);
}

TokenStream::TokenStream(std::shared_ptr<const void> owner, const void* ids, int width,
                         size_t count)
    : owner_(std::move(owner)), ids_(ids), width_(width), size_(count) {
  HWT_CHECK(width == 2 || width == 4, "token width {}", width);
}

void TokenStream::read(int64_t first, int64_t count, int32_t* out) const {
  HWT_CHECK(first >= 0 && count >= 0 && static_cast<size_t>(first + count) <= size_,
            "ids [{}, {}) of a stream of {}", first, first + count, size_);
  if (count == 0) return;
  if (width_ == 4) {
    std::memcpy(out, static_cast<const int32_t*>(ids_) + first,
                static_cast<size_t>(count) * sizeof(int32_t));
    return;
  }
  const uint16_t* in = static_cast<const uint16_t*>(ids_) + first;
  std::copy(in, in + count, out);
}

TokenStream TokenStream::slice(size_t first, size_t count) const {
  HWT_CHECK(first + count <= size_, "slice [{}, {}) of a stream of {}", first, first + count,
            size_);
  const auto* bytes = static_cast<const std::byte*>(ids_);
  return TokenStream(owner_, bytes + first * static_cast<size_t>(width_), width_, count);
}

std::vector<int32_t> TokenStream::to_vector() const {
  std::vector<int32_t> ids(size_);
  read(0, static_cast<int64_t>(size_), ids.data());
  return ids;
}

}  // namespace hwt
