// The safetensors checkpoint format (https://github.com/huggingface/safetensors): an 8-byte
// little-endian header length N, N bytes of JSON header (padded with spaces to a multiple of
// 8), then the raw tensor data. Shape [] is a scalar (one element), as in the reference.
// hwt adds one metadata entry, "tensor_xxh3_64": a JSON object giving each tensor's XXH3-64
// checksum of its bytes as 16 hex digits, checked on open (other readers ignore it).
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
// device-to-host copy costs little beyond the disk's own time. Every tensor's checksum goes into
// the metadata. Throws hwt::Error on a duplicate name, a tensor named "__metadata__" or metadata
// named "tensor_xxh3_64".
void write_safetensors(const std::string& path, const std::vector<SafetensorsEntry>& tensors,
                       const std::map<std::string, std::string>& metadata,
                       size_t piece_bytes = size_t{64} << 20);

// A whole file mapped into memory (MappedFile) and fully validated on open(): every malformed
// input, and every tensor whose bytes do not match its checksum, raises hwt::InputError
// "checkpoint <path>: <problem>". Files without checksums (written before hwt had them, or by
// other tools) open. Checking the checksums reads every page once.
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
  // The metadata, less the checksums.
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  // Whether the file carried checksums (all of them were then verified).
  bool checksummed() const { return checksummed_; }
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
  bool checksummed_ = false;
};

}  // namespace hwt
