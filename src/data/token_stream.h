// The token ids of a language-modelling split: held in memory (one vector, or the consecutive
// parts a corpus was encoded in), or a read-only view of a token shard's mapping (uint16 or
// uint32 ids), read a window at a time without copying the stream.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace hwt {

class TokenStream {
 public:
  TokenStream() = default;
  // Ids held in memory (implicit: a vector of ids is a stream).
  TokenStream(std::vector<int32_t> ids);
  // The parts one after another, held where they are rather than copied into one vector.
  explicit TokenStream(std::vector<std::vector<int32_t>> parts);
  // `count` ids of `width` bytes (2 or 4, native byte order) at `ids`, which `owner` keeps alive.
  TokenStream(std::shared_ptr<const void> owner, const void* ids, int width, size_t count);

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int width() const { return width_; }  // bytes per stored id
  // Copies ids [first, first + count) to `out`.
  void read(int64_t first, int64_t count, int32_t* out) const;
  // Ids [first, first + count), sharing this stream's storage.
  TokenStream slice(size_t first, size_t count) const;
  std::vector<int32_t> to_vector() const;
  bool operator==(const TokenStream& other) const { return to_vector() == other.to_vector(); }

 private:
  // Adds `count` ids at `ids` after the last run (none when count is 0).
  void append_run(const void* ids, size_t count);

  // Consecutive runs of ids in storage; `starts` holds each run's index in the stream.
  struct Run {
    const std::byte* ids;
    size_t count;
  };

  std::shared_ptr<const void> owner_;
  std::vector<Run> runs_;
  std::vector<size_t> starts_;
  int width_ = 4;
  size_t size_ = 0;
};

}  // namespace hwt
