// The safetensors checkpoint format (https://github.com/huggingface/safetensors): an 8-byte
// little-endian header length N, N bytes of JSON header (padded with spaces to a multiple of
// 8), then the raw tensor data. Shape [] is a scalar (one element), as in the reference.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/files.h"

namespace hwt {

// A tensor to write: its bytes in host memory (`data`), or a `read` that copies bytes
// [offset, offset + n) of it into `dst` (for tensors on a device, fetched piece by piece).
struct SafetensorsEntry {
  using Reader = std::function<void(size_t offset, size_t n, void* dst)>;
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  const void* data = nullptr;
  Reader read = {};
};

// Writes atomically. The data section follows the order given, so callers passing tensors in
// flat-buffer order get large sequential writes. Tensors with a `read` go through two host
// buffers of `piece_bytes`: the file write of one piece overlaps the read of the next, so a
// device-to-host copy costs little beyond the disk's own time. Throws hwt::Error on a duplicate
// name or a tensor named "__metadata__".
void write_safetensors(const std::string& path, const std::vector<SafetensorsEntry>& tensors,
                       const std::map<std::string, std::string>& metadata,
                       size_t piece_bytes = size_t{64} << 20);

// A whole file mapped into memory (MappedFile: a tensor's pages are read when it is read) and
// fully validated on open(): every malformed input raises hwt::InputError
// "checkpoint <path>: <problem>".
class SafetensorsFile {
 public:
  struct View {
    DType dtype;
    std::vector<int64_t> shape;
    const void* data;  // 8-byte aligned; valid while the file object lives
    size_t bytes;
  };

  static SafetensorsFile open(const std::string& path);

  const std::string& path() const { return path_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  std::vector<std::string> names() const;  // in data-offset order
  bool contains(const std::string& name) const { return entries_.count(name) != 0; }
  View get(const std::string& name) const;

 private:
  struct Entry {
    DType dtype;
    std::vector<int64_t> shape;
    size_t begin, end;  // relative to the data section
  };

  SafetensorsFile() = default;

  std::string path_;
  std::shared_ptr<const MappedFile> file_;
  // A file whose data section does not start 8-byte aligned (no writer pads its header so) is
  // copied here, to alignment (a vector's buffer survives moves).
  std::vector<uint64_t> aligned_copy_;
  const char* data_ = nullptr;  // the data section, 8-byte aligned
  std::map<std::string, Entry> entries_;
  std::vector<std::string> order_;
  std::map<std::string, std::string> metadata_;
};

}  // namespace hwt
