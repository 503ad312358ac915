#include "core/safetensors.h"

#include <fmt/ranges.h>

#include <xxhash.h>
#include <algorithm>
#include <array>
#include <cstring>
#include <future>
#include <limits>
#include <new>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <tuple>

#include "core/error.h"
#include "core/files.h"

namespace hwt {
namespace {

using nlohmann::json;

// Two host buffers: one is filled while the other's bytes go to the file on another thread.
// Pieces of several small tensors share a buffer, so that a model of many small tensors costs a
// few large writes, not one write (and thread) per tensor.
class PipelinedWriter {
 public:
  PipelinedWriter(AtomicFileWriter& out, size_t piece_bytes) : out_(out), piece_(piece_bytes) {}
  ~PipelinedWriter() {
    if (pending_.valid()) pending_.wait();  // an error is being thrown already
  }
  // Room for n <= piece_bytes bytes in the buffer being filled, which is sent first when they
  // do not fit.
  void* reserve(size_t n) {
    if (fill_ + n > piece_) send();
    std::vector<char>& b = buffers_[next_];
    if (b.size() < piece_) b.resize(piece_);
    void* at = b.data() + fill_;
    fill_ += n;
    return at;
  }
  // Writes what the buffer being filled holds, on another thread once the previous write is
  // done, and starts filling the other buffer.
  void send() {
    if (fill_ == 0) return;
    drain();
    const char* data = buffers_[next_].data();
    pending_ = std::async(std::launch::async, [this, data, n = fill_] { out_.write(data, n); });
    next_ ^= 1;
    fill_ = 0;
  }
  // Sends what is filled and waits for every write, rethrowing an error.
  void finish() {
    send();
    drain();
  }

 private:
  void drain() {
    if (pending_.valid()) pending_.get();
  }

  AtomicFileWriter& out_;
  size_t piece_;
  std::array<std::vector<char>, 2> buffers_;
  int next_ = 0;
  size_t fill_ = 0;
  std::future<void> pending_;
};

constexpr uint64_t kMaxHeaderBytes = 100'000'000;  // the reference implementation's limit
constexpr const char* kMetadataKey = "__metadata__";
constexpr const char* kChecksumKey = "tensor_xxh3_64";
constexpr std::array kDTypes = {DType::F32, DType::F16,    DType::BF16,
                                DType::I32, DType::F8E4M3, DType::F8E5M2};

std::string_view format_name(DType t) {
  switch (t) {
    case DType::F32:
      return "F32";
    case DType::F16:
      return "F16";
    case DType::BF16:
      return "BF16";
    case DType::I32:
      return "I32";
    case DType::F8E4M3:
      return "F8_E4M3";
    case DType::F8E5M2:
      return "F8_E5M2";
  }
  return "?";
}

std::optional<DType> dtype_from_format_name(std::string_view s) {
  for (DType t : kDTypes)
    if (format_name(t) == s) return t;
  return std::nullopt;
}

// Bytes of a tensor, or nullopt when the count overflows 64 bits.
std::optional<uint64_t> tensor_bytes(DType t, const std::vector<uint64_t>& shape) {
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return 0;
  uint64_t n = dtype_size(t);
  for (uint64_t d : shape) {
    if (n > std::numeric_limits<uint64_t>::max() / d) return std::nullopt;
    n *= d;
  }
  return n;
}

template <class... Args>
[[noreturn]] void bad(const std::string& path, fmt::format_string<Args...> f, Args&&... args) {
  fail_input("checkpoint {}: {}", path, fmt::format(f, std::forward<Args>(args)...));
}

uint64_t read_header_length(const std::string& path, std::string_view bytes) {
  if (bytes.size() < 8)
    bad(path, "too short ({} bytes) to hold the 8-byte header length", bytes.size());
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[size_t(i)]);
  if (n > kMaxHeaderBytes)
    bad(path, "header length {} exceeds the {}-byte limit (not a safetensors file?)", n,
        kMaxHeaderBytes);
  if (n > bytes.size() - 8)
    bad(path, "truncated (header length is {} bytes, file has {} after the length)", n,
        bytes.size() - 8);
  return n;
}

json parse_header(const std::string& path, const char* begin, const char* end) {
  try {
    json header = json::parse(begin, end);
    if (!header.is_object()) bad(path, "header is not a JSON object");
    return header;
  } catch (const json::exception& e) {
    // Drop nlohmann's "[json.exception.parse_error.101] " tag; the rest is the useful part.
    std::string_view what = e.what();
    if (size_t tag_end = what.find("] "); tag_end != std::string_view::npos)
      what.remove_prefix(tag_end + 2);
    bad(path, "header is not valid JSON: {}", what);
  }
}

const json& field(const std::string& path, const std::string& name, const json& entry,
                  const char* key) {
  auto it = entry.find(key);
  if (it == entry.end()) bad(path, "tensor '{}' has no {}", name, key);
  return *it;
}

DType parse_dtype(const std::string& path, const std::string& name, const json& entry) {
  const json& v = field(path, name, entry, "dtype");
  if (!v.is_string()) bad(path, "tensor '{}': dtype is not a string", name);
  std::optional<DType> t = dtype_from_format_name(v.get<std::string>());
  if (!t)
    bad(path, "tensor '{}': unsupported dtype {} (hwt reads F32, F16, BF16, I32)", name, v.dump());
  return *t;
}

std::vector<uint64_t> parse_shape(const std::string& path, const std::string& name,
                                  const json& entry) {
  const json& v = field(path, name, entry, "shape");
  if (!v.is_array()) bad(path, "tensor '{}': shape is not an array", name);
  std::vector<uint64_t> shape;
  for (const json& d : v) {
    if (!d.is_number_integer()) bad(path, "tensor '{}': shape holds {}", name, d.dump());
    if (!d.is_number_unsigned()) bad(path, "tensor '{}': negative dimension {}", name, d.dump());
    if (d.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
      bad(path, "tensor '{}': dimension {} is too large", name, d.dump());
    shape.push_back(d.get<uint64_t>());
  }
  return shape;
}

std::pair<uint64_t, uint64_t> parse_offsets(const std::string& path, const std::string& name,
                                            const json& entry) {
  const json& v = field(path, name, entry, "data_offsets");
  if (!v.is_array() || v.size() != 2 || !v[0].is_number_unsigned() || !v[1].is_number_unsigned())
    bad(path, "tensor '{}': data_offsets {} is not a pair of non-negative integers", name,
        v.dump());
  uint64_t begin = v[0].get<uint64_t>(), end = v[1].get<uint64_t>();
  if (begin > end) bad(path, "tensor '{}': data_offsets [{}, {}] are reversed", name, begin, end);
  return {begin, end};
}

std::string checksum_hex(XXH64_hash_t h) {
  return fmt::format("{:016x}", h);
}

// XXH3-64 of a tensor's bytes, fed piece by piece as they are written.
class TensorHash {
 public:
  TensorHash() : state_(XXH3_createState()) {
    if (!state_) throw std::bad_alloc();
    XXH3_64bits_reset(state_);
  }
  ~TensorHash() { XXH3_freeState(state_); }
  TensorHash(const TensorHash&) = delete;
  TensorHash& operator=(const TensorHash&) = delete;
  void add(const void* data, size_t n) { XXH3_64bits_update(state_, data, n); }
  // The checksum of everything added since the last call.
  std::string take() {
    const std::string hex = checksum_hex(XXH3_64bits_digest(state_));
    XXH3_64bits_reset(state_);
    return hex;
  }

 private:
  XXH3_state_t* state_;
};

// The header text: the length's 8 bytes, then the JSON padded so that data starts 8-byte aligned.
// `j` as JSON text; hwt::Error naming `path` for a string that is not valid UTF-8.
template <class Json>
std::string json_text(const std::string& path, const Json& j) {
  try {
    return j.dump();
  } catch (const typename Json::exception&) {
    fail("cannot write {}: a tensor name or metadata string is not valid UTF-8", path);
  }
}

// The header: the length's 8 bytes, then the JSON padded so that data starts 8-byte aligned.
std::string header_bytes(std::string text) {
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  for (size_t i = 0; i < 8; ++i) out[i] = static_cast<char>(text.size() >> (8 * i));
  return out + text;
}

// Checks every tensor against its checksum; `sums` is the metadata's JSON text.
void verify_checksums(const std::string& path, const std::string& sums_text,
                      const std::map<std::string, SafetensorsFile::View>& views) {
  json sums;
  try {
    sums = json::parse(sums_text);
  } catch (const json::exception&) {
    bad(path, "metadata '{}' is not valid JSON", kChecksumKey);
  }
  if (!sums.is_object()) bad(path, "metadata '{}' is not a JSON object", kChecksumKey);
  for (const auto& [name, sum] : sums.items())
    if (!views.count(name))
      bad(path, "checksum for tensor '{}', which the file does not hold", name);
  for (const auto& [name, v] : views) {
    const auto it = sums.find(name);
    if (it == sums.end() || !it->is_string()) bad(path, "tensor '{}' has no checksum", name);
    if (checksum_hex(XXH3_64bits(v.data, v.bytes)) != it->get<std::string>())
      bad(path, "tensor '{}' is corrupted: its bytes do not match their checksum", name);
  }
}

struct Span {
  uint64_t begin, end;
  const std::string* name;
};

// Tensors must tile the data section exactly: no overlap, no hole, nothing past the end.
void check_layout(const std::string& path, std::vector<Span>& spans, uint64_t data_size) {
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) {
    return std::tie(a.begin, a.end, *a.name) < std::tie(b.begin, b.end, *b.name);
  });
  uint64_t max_end = 0;
  for (const Span& s : spans) max_end = std::max(max_end, s.end);
  if (max_end > data_size)
    bad(path, "truncated (header says {} bytes of data, file has {})", max_end, data_size);
  uint64_t pos = 0;
  const std::string* prev = nullptr;
  for (const Span& s : spans) {
    if (s.begin < pos) bad(path, "tensors '{}' and '{}' overlap", *prev, *s.name);
    if (s.begin > pos) bad(path, "{} unused bytes before tensor '{}'", s.begin - pos, *s.name);
    pos = s.end;
    prev = s.name;
  }
  if (pos < data_size) bad(path, "{} bytes of trailing garbage after the tensors", data_size - pos);
}

}  // namespace

void write_safetensors(const std::string& path, const std::vector<SafetensorsEntry>& tensors,
                       const std::map<std::string, std::string>& metadata, size_t piece_bytes) {
  if (metadata.count(kChecksumKey))
    fail("cannot write {}: metadata '{}' is hwt's own", path, kChecksumKey);
  // The reference layout: metadata first, then tensors in data order. The text is put together
  // here rather than in an ordered_json, whose keys are found by linear search (a model with
  // 100,000 tensors would take minutes).
  std::vector<std::string> names, entries, sums;
  std::set<std::string_view> seen;
  std::vector<size_t> sizes;
  size_t offset = 0;
  for (const SafetensorsEntry& t : tensors) {
    if (t.name == kMetadataKey) fail("cannot write {}: a tensor is named {}", path, kMetadataKey);
    if (!seen.insert(t.name).second) fail("cannot write {}: duplicate tensor '{}'", path, t.name);
    size_t bytes = dtype_size(t.dtype);
    for (int64_t d : t.shape) {
      HWT_CHECK(d >= 0, "tensor '{}' has negative dimension {}", t.name, d);
      bytes *= static_cast<size_t>(d);
    }
    HWT_CHECK(bytes == 0 || t.data != nullptr || t.read, "tensor '{}' has no data", t.name);
    nlohmann::ordered_json e = nlohmann::ordered_json::object();
    e["dtype"] = format_name(t.dtype);
    e["shape"] = t.shape;
    e["data_offsets"] = {offset, offset + bytes};
    names.push_back(json_text(path, nlohmann::json(t.name)));
    entries.push_back(e.dump());
    sums.push_back(checksum_hex(0));  // a placeholder as long as the checksum
    sizes.push_back(bytes);
    offset += bytes;
  }
  // The checksums are known once the data has gone through; the header is written with
  // placeholders of the same length first and rewritten at the end.
  auto header = [&] {
    std::string sum_text = "{";
    for (size_t i = 0; i < names.size(); ++i)
      sum_text += fmt::format("{}{}:\"{}\"", i ? "," : "", names[i], sums[i]);
    std::map<std::string, std::string> meta = metadata;
    meta[kChecksumKey] = sum_text + "}";
    std::string text =
        fmt::format("{{\"{}\":{}", kMetadataKey, json_text(path, nlohmann::json(meta)));
    for (size_t i = 0; i < names.size(); ++i) text += "," + names[i] + ":" + entries[i];
    return header_bytes(text + "}");
  };
  const std::string placeholder = header();
  AtomicFileWriter out(path);
  out.write(placeholder);
  PipelinedWriter pipe(out, piece_bytes);
  TensorHash hash;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const SafetensorsEntry& t = tensors[i];
    if (!t.read) {
      pipe.finish();
      hash.add(t.data, sizes[i]);
      out.write(t.data, sizes[i]);
    }
    for (size_t at = 0; t.read && at < sizes[i]; at += piece_bytes) {
      const size_t n = std::min(piece_bytes, sizes[i] - at);
      void* piece = pipe.reserve(n);
      t.read(at, n, piece);
      hash.add(piece, n);
    }
    sums[i] = hash.take();
  }
  pipe.finish();
  const std::string final_header = header();
  HWT_CHECK(final_header.size() == placeholder.size(), "header of {} changed length", path);
  out.write_at(0, final_header);
  out.commit();
}

SafetensorsFile SafetensorsFile::open(const std::string& path) {
  SafetensorsFile f;
  f.path_ = path;
  f.file_ = MappedFile::open(path);
  const std::string_view bytes = f.file_->bytes();
  uint64_t header_bytes = read_header_length(path, bytes);
  size_t data_start = 8 + header_bytes;
  uint64_t data_size = bytes.size() - data_start;
  json header = parse_header(path, bytes.data() + 8, bytes.data() + data_start);

  std::vector<Span> spans;
  for (const auto& [name, value] : header.items()) {
    if (name == kMetadataKey) {
      if (!value.is_object()) bad(path, "{} is not an object", kMetadataKey);
      for (const auto& [k, v] : value.items()) {
        if (!v.is_string()) bad(path, "metadata '{}' is not a string: {}", k, v.dump());
        f.metadata_[k] = v.get<std::string>();
      }
      continue;
    }
    if (!value.is_object()) bad(path, "tensor '{}': entry is not an object", name);
    DType dtype = parse_dtype(path, name, value);
    std::vector<uint64_t> shape = parse_shape(path, name, value);
    auto [begin, end] = parse_offsets(path, name, value);
    std::optional<uint64_t> need = tensor_bytes(dtype, shape);
    if (!need) bad(path, "tensor '{}': shape {} is too large", name, shape);
    if (*need != end - begin)
      bad(path, "tensor '{}': data_offsets [{}, {}] hold {} bytes but {} {} needs {}", name, begin,
          end, end - begin, format_name(dtype), shape, *need);
    // JSON object keys are unique, so every emplace inserts.
    auto it = f.entries_
                  .emplace(name, Entry{dtype, std::vector<int64_t>(shape.begin(), shape.end()),
                                       begin, end})
                  .first;
    spans.push_back({begin, end, &it->first});
  }
  check_layout(path, spans, data_size);
  for (const Span& s : spans) f.order_.push_back(*s.name);

  // Writers pad the header so data starts 8-byte aligned; copy an unpadded file's data so that
  // views are as aligned as their offsets.
  f.data_ = bytes.data() + data_start;
  if (data_start % 8 != 0) {
    f.aligned_copy_.resize((data_size + 7) / 8);
    std::memcpy(f.aligned_copy_.data(), f.data_, data_size);
    f.data_ = reinterpret_cast<const char*>(f.aligned_copy_.data());
  }

  if (const auto sums = f.metadata_.find(kChecksumKey); sums != f.metadata_.end()) {
    std::map<std::string, View> views;
    for (const std::string& name : f.order_) views.emplace(name, f.get(name));
    verify_checksums(path, sums->second, views);
    f.metadata_.erase(sums);
    f.checksummed_ = true;
  }
  return f;
}

std::vector<std::string> SafetensorsFile::names() const {
  return order_;
}

SafetensorsFile::View SafetensorsFile::get(const std::string& name) const {
  auto it = entries_.find(name);
  if (it == entries_.end()) bad(path_, "tensor '{}' missing", name);
  const Entry& e = it->second;
  return {e.dtype, e.shape, data_ + e.begin, e.end - e.begin};
}

}  // namespace hwt
