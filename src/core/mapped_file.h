// A whole file mapped read-only into memory: its pages are read on first touch and shared with
// the page cache, so a large file costs no copy and no start-up read.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace hwt {

class MappedFile {
 public:
  // The file at `path`; nullptr when there is none. Other failures raise InputError naming it.
  static std::unique_ptr<const MappedFile> open(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::byte* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  MappedFile(const std::byte* data, size_t size) : data_(data), size_(size) {}
  const std::byte* data_;
  size_t size_;
};

}  // namespace hwt
