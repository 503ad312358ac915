#include "data/token_stream.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"

namespace hwt {

TokenStream::TokenStream(std::vector<int32_t> ids) {
  if (ids.empty()) return;
  auto held = std::make_shared<const std::vector<int32_t>>(std::move(ids));
  append_run(held->data(), held->size());
  owner_ = std::move(held);
}

TokenStream::TokenStream(std::vector<std::vector<int32_t>> parts) {
  auto held = std::make_shared<const std::vector<std::vector<int32_t>>>(std::move(parts));
  for (const std::vector<int32_t>& p : *held) append_run(p.data(), p.size());
  owner_ = std::move(held);
}

TokenStream::TokenStream(std::shared_ptr<const void> owner, const void* ids, int width,
                         size_t count)
    : owner_(std::move(owner)), width_(width) {
  HWT_CHECK(width == 2 || width == 4, "token width {}", width);
  append_run(ids, count);
}

void TokenStream::append_run(const void* ids, size_t count) {
  if (count == 0) return;
  runs_.push_back({static_cast<const std::byte*>(ids), count});
  starts_.push_back(size_);
  size_ += count;
}

void TokenStream::read(int64_t first, int64_t count, int32_t* out) const {
  HWT_CHECK(first >= 0 && count >= 0 && static_cast<size_t>(first + count) <= size_,
            "ids [{}, {}) of a stream of {}", first, first + count, size_);
  size_t at = static_cast<size_t>(first), left = static_cast<size_t>(count);
  // The run holding `at`: the last that starts at or before it.
  size_t r =
      static_cast<size_t>(std::upper_bound(starts_.begin(), starts_.end(), at) - starts_.begin()) -
      1;
  for (; left > 0; ++r) {
    const size_t skip = at - starts_[r], n = std::min(left, runs_[r].count - skip);
    const std::byte* in = runs_[r].ids + skip * static_cast<size_t>(width_);
    if (width_ == 4) {
      std::memcpy(out, in, n * sizeof(int32_t));
    } else {
      const auto* narrow = reinterpret_cast<const uint16_t*>(in);
      std::copy(narrow, narrow + n, out);
    }
    out += n;
    at += n;
    left -= n;
  }
}

TokenStream TokenStream::slice(size_t first, size_t count) const {
  HWT_CHECK(first + count <= size_, "slice [{}, {}) of a stream of {}", first, first + count,
            size_);
  TokenStream s;
  s.owner_ = owner_;
  s.width_ = width_;
  for (size_t r = 0; r < runs_.size(); ++r) {
    const size_t begin = std::max(first, starts_[r]);
    const size_t end = std::min(first + count, starts_[r] + runs_[r].count);
    if (begin < end)
      s.append_run(runs_[r].ids + (begin - starts_[r]) * static_cast<size_t>(width_), end - begin);
  }
  return s;
}

std::vector<int32_t> TokenStream::to_vector() const {
  std::vector<int32_t> ids(size_);
  read(0, static_cast<int64_t>(size_), ids.data());
  return ids;
}

}  // namespace hwt
