#include "core/safetensors.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <xxhash.h>
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/files.h"
#include "core/integer_math.h"

namespace hwt {
namespace {

namespace fs = std::filesystem;

std::string le64(uint64_t n) {
  std::string s;
  for (int i = 0; i < 8; ++i) s += static_cast<char>((n >> (8 * i)) & 0xff);
  return s;
}

// A file as another writer might make it; `pad` spaces the header to a multiple of 8.
std::string build(std::string header, const std::string& data, bool pad = true) {
  if (pad) header.append((8 - header.size() % 8) % 8, ' ');
  return le64(header.size()) + header + data;
}

class Safetensors : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           fmt::format("hwt_safetensors_{}_{}", ::getpid(),
                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // Plain write, no fsync: corruption tests write thousands of files. Removing first avoids
  // ext4's flush-on-close after a truncating rewrite.
  std::string put(const std::string& bytes) const {
    std::string p = path("t.safetensors");
    fs::remove(p);
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }

  // Opening must succeed or raise InputError; anything else (or a crash) fails the test.
  void open_or_input_error(const std::string& bytes) const {
    try {
      SafetensorsFile f = SafetensorsFile::open(put(bytes));
      for (const std::string& n : f.names()) {
        SafetensorsFile::View v = f.get(n);
        EXPECT_TRUE(v.bytes == 0 || v.data != nullptr) << n;
      }
    } catch (const InputError&) {
    }
  }

  void expect_input_error(const std::string& bytes, const std::string& needle) const {
    std::string p = put(bytes);
    try {
      SafetensorsFile::open(p);
      ADD_FAILURE() << "no error; expected one mentioning: " << needle;
    } catch (const InputError& e) {
      std::string msg = e.what();
      EXPECT_EQ(msg.rfind("checkpoint " + p + ": ", 0), 0u) << msg;
      EXPECT_NE(msg.find(needle), std::string::npos) << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
  }

  fs::path dir_;
};

TEST_F(Safetensors, RoundTripsDtypesShapesAndMetadata) {
  std::vector<int32_t> ids = {-1, 0, 7};
  std::vector<float> w = {0.f, 0.5f, 1.f, 1.5f, 2.f, 2.5f};
  std::vector<uint16_t> half = {0x3c00, 0xbc00, 0x7bff, 0x0001};
  std::vector<uint16_t> bf = {0x3f80, 0xc000, 0x7f80, 0x0000};
  float scalar = 3.25f;
  // Given order is data order, deliberately not alphabetical.
  std::vector<SafetensorsEntry> in = {
      {"ids", DType::I32, {3}, ids.data()},   {"w", DType::F32, {2, 3}, w.data()},
      {"half", DType::F16, {4}, half.data()}, {"bf", DType::BF16, {2, 2}, bf.data()},
      {"scalar", DType::F32, {}, &scalar},    {"empty", DType::F32, {0, 5}, nullptr},
  };
  std::map<std::string, std::string> meta = {
      {"format", "pt"}, {"step", "100"}, {"note", "ünïcode \"quoted\"\n"}};
  write_safetensors(path("m.safetensors"), in, meta);

  SafetensorsFile f = SafetensorsFile::open(path("m.safetensors"));
  EXPECT_EQ(f.metadata(), meta);
  EXPECT_EQ(f.names(), (std::vector<std::string>{"ids", "w", "half", "bf", "scalar", "empty"}));
  EXPECT_TRUE(f.contains("half"));
  EXPECT_FALSE(f.contains("__metadata__"));
  for (const SafetensorsEntry& e : in) {
    SafetensorsFile::View v = f.get(e.name);
    EXPECT_EQ(v.dtype, e.dtype) << e.name;
    EXPECT_EQ(v.shape, e.shape) << e.name;
    size_t bytes = dtype_size(e.dtype);
    for (int64_t d : e.shape) bytes *= static_cast<size_t>(d);
    ASSERT_EQ(v.bytes, bytes) << e.name;
    EXPECT_TRUE(bytes == 0 || std::memcmp(v.data, e.data, bytes) == 0) << e.name;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(v.data) % dtype_size(e.dtype), 0u) << e.name;
  }
}

TEST_F(Safetensors, HeaderIsPaddedToEightBytes) {
  for (std::string name : {"a", "ab", "abc", "abcd", "abcde", "abcdef", "abcdefg", "abcdefgh"}) {
    float x = 1.f;
    write_safetensors(path("p"), {{name, DType::F32, {1}, &x}}, {});
    std::string bytes = read_file(path("p"));
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[size_t(i)]);
    EXPECT_EQ(n % 8, 0u) << name;
    ASSERT_EQ(bytes.size(), 8 + n + 4) << name;
    EXPECT_EQ(bytes[8], '{');
    EXPECT_EQ(bytes.substr(bytes.size() - 4), std::string("\x00\x00\x80\x3f", 4));
  }
}

TEST_F(Safetensors, MatchesHandBuiltReference) {
  float w[2] = {1.f, -2.f};
  uint16_t a = 0x3f80;  // bf16 1.0
  write_safetensors(path("ref"), {{"w", DType::F32, {2}, w}, {"a", DType::BF16, {1}, &a}},
                    {{"k", "v"}});
  // The checksums are XXH3-64 of each tensor's bytes, as 16 hex digits.
  const std::string sums = fmt::format(R"({{\"w\":\"{:016x}\",\"a\":\"{:016x}\"}})",
                                       XXH3_64bits(w, 8), XXH3_64bits(&a, 2));
  std::string header = R"({"__metadata__":{"k":"v","tensor_xxh3_64":")" + sums + R"("},)" +
                       R"("w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                       R"("a":{"dtype":"BF16","shape":[1],"data_offsets":[8,10]}})";
  std::string expected = build(header, std::string("\x00\x00\x80\x3f", 4) +      // 1.0f
                                           std::string("\x00\x00\x00\xc0", 4) +  // -2.0f
                                           std::string("\x80\x3f", 2));          // bf16 1.0
  EXPECT_EQ(read_file(path("ref")), expected);
  EXPECT_TRUE(SafetensorsFile::open(path("ref")).checksummed());
}

TEST_F(Safetensors, WriterRejectsBadNames) {
  float x = 0.f;
  EXPECT_THROW(
      write_safetensors(path("d"), {{"a", DType::F32, {1}, &x}, {"a", DType::F32, {1}, &x}}, {}),
      Error);
  EXPECT_THROW(write_safetensors(path("d"), {{"__metadata__", DType::F32, {1}, &x}}, {}), Error);
  EXPECT_FALSE(fs::exists(path("d")));
  EXPECT_TRUE(fs::is_empty(dir_));
}

// Tensors read piece by piece (as from a device) give the same file as host tensors, for
// pieces smaller than, equal to and larger than a tensor, and mixed with host tensors.
TEST_F(Safetensors, PiecewiseReadsWriteTheSameBytes) {
  std::vector<float> a(1000), b(7);
  for (size_t i = 0; i < a.size(); ++i) a[i] = 0.5f * static_cast<float>(i) - 3.f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i * i);
  const std::map<std::string, std::string> meta = {{"k", "v"}};
  write_safetensors(path("host"),
                    {{"a", DType::F32, {10, 100}, a.data()}, {"b", DType::F32, {7}, b.data()}},
                    meta);
  const std::string want = read_file(path("host"));
  auto from = [](const std::vector<float>& v, std::vector<size_t>& asked) {
    return [&v, &asked](size_t offset, size_t n, void* dst) {
      asked.push_back(n);
      std::memcpy(dst, reinterpret_cast<const char*>(v.data()) + offset, n);
    };
  };
  for (size_t piece : {size_t{64}, size_t{4000}, size_t{1} << 20}) {
    std::vector<size_t> asked;
    write_safetensors(
        path("piecewise"),
        {{"a", DType::F32, {10, 100}, nullptr, from(a, asked)}, {"b", DType::F32, {7}, b.data()}},
        meta, piece);
    EXPECT_EQ(read_file(path("piecewise")), want) << "pieces of " << piece;
    EXPECT_EQ(asked.size(), ceil_div(4000, piece)) << "pieces of " << piece;
    EXPECT_LE(*std::max_element(asked.begin(), asked.end()), piece);
  }
}

// A read that fails leaves nothing behind, as any other failed write.
TEST_F(Safetensors, FailedPieceReadWritesNothing) {
  auto failing = [](size_t offset, size_t n, void* dst) {
    if (offset >= 64) throw Error("device lost");
    std::memset(dst, 0, n);
  };
  EXPECT_THROW(write_safetensors(path("f"), {{"a", DType::F32, {100}, nullptr, failing}}, {}, 64),
               Error);
  EXPECT_TRUE(fs::is_empty(dir_));
}

TEST_F(Safetensors, EmptyFileAndMissingTensor) {
  write_safetensors(path("e"), {}, {});
  EXPECT_EQ(read_file(path("e")), build(R"({"__metadata__":{"tensor_xxh3_64":"{}"}})", ""));
  SafetensorsFile f = SafetensorsFile::open(path("e"));
  EXPECT_TRUE(f.names().empty());
  EXPECT_TRUE(f.metadata().empty());
  try {
    f.get("nope");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "checkpoint " + path("e") + ": tensor 'nope' missing");
  }
}

TEST_F(Safetensors, ReadsUnpaddedHeaderWithAlignedData) {
  std::string header = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}   )";
  ASSERT_NE(header.size() % 8, 0u);
  float x[2] = {1.5f, -4.f};
  std::string bytes = build(header, std::string(reinterpret_cast<char*>(x), 8), false);
  SafetensorsFile f = SafetensorsFile::open(put(bytes));
  SafetensorsFile::View v = f.get("a");
  EXPECT_EQ(reinterpret_cast<uintptr_t>(v.data) % 8, 0u);
  ASSERT_EQ(v.bytes, 8u);
  EXPECT_EQ(std::memcmp(v.data, x, 8), 0);
}

// Files without checksums (older hwt, other writers) open, and say so.
TEST_F(Safetensors, FilesWithoutChecksumsOpen) {
  const float x[2] = {1.5f, -4.f};
  const SafetensorsFile f =
      SafetensorsFile::open(put(build(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
                                      std::string(reinterpret_cast<const char*>(x), 8))));
  EXPECT_FALSE(f.checksummed());
  EXPECT_EQ(std::memcmp(f.get("a").data, x, 8), 0);
}

// Every byte of every tensor is covered: a flip anywhere in the data names its tensor, for
// tensors written from host memory and piece by piece.
TEST_F(Safetensors, ChecksumsCatchEveryFlippedDataByte) {
  std::vector<float> a(40), b(3);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i);
  auto from_a = [&a](size_t offset, size_t n, void* dst) {
    std::memcpy(dst, reinterpret_cast<const char*>(a.data()) + offset, n);
  };
  write_safetensors(
      path("c"),
      {{"first", DType::F32, {40}, nullptr, from_a}, {"second", DType::F32, {3}, b.data()}},
      {{"k", "v"}}, 64);
  const std::string bytes = read_file(path("c"));
  const size_t data = bytes.size() - 4 * (a.size() + b.size());
  for (size_t i = data; i < bytes.size(); ++i) {
    std::string flipped = bytes;
    flipped[i] = static_cast<char>(flipped[i] ^ 0x10);
    SCOPED_TRACE(i);
    expect_input_error(flipped, fmt::format("tensor '{}' is corrupted",
                                            i < data + 4 * a.size() ? "first" : "second"));
  }
}

TEST_F(Safetensors, ChecksumMetadataIsReserved) {
  float x = 0.f;
  EXPECT_THROW(
      write_safetensors(path("r"), {{"a", DType::F32, {1}, &x}}, {{"tensor_xxh3_64", "{}"}}),
      Error);
  EXPECT_TRUE(fs::is_empty(dir_));
}

struct Corrupt {
  std::string bytes;
  std::string needle;
};

TEST_F(Safetensors, EveryCorruptionIsInputError) {
  auto one = [](const std::string& entry) { return R"({"a":)" + entry + "}"; };
  std::string f32x2 = std::string(8, '\1');
  const std::vector<Corrupt> cases = {
      {"abc", "too short (3 bytes)"},
      {le64(200'000'000) + "{}", "exceeds the 100000000-byte limit"},
      {le64(100) + "{}", "truncated (header length is 100 bytes, file has 2 after the length)"},
      {build("", ""), "not valid JSON"},
      {build(R"({"a": )", ""), "not valid JSON"},
      {build("{\"\xff\":{}}", ""), "not valid JSON"},
      {build("[1,2]", ""), "not a JSON object"},
      {build(std::string(100000, '[') + std::string(100000, ']'), ""), "not a JSON object"},
      {build(one("3"), ""), "tensor 'a': entry is not an object"},
      {build(one(R"({"shape":[2],"data_offsets":[0,8]})"), f32x2), "tensor 'a' has no dtype"},
      {build(one(R"({"dtype":"F32","data_offsets":[0,8]})"), f32x2), "has no shape"},
      {build(one(R"({"dtype":"F32","shape":[2]})"), f32x2), "has no data_offsets"},
      {build(one(R"({"dtype":5,"shape":[2],"data_offsets":[0,8]})"), f32x2),
       "dtype is not a string"},
      {build(one(R"({"dtype":"F64","shape":[1],"data_offsets":[0,8]})"), f32x2),
       "unsupported dtype \"F64\""},
      {build(one(R"({"dtype":"F32","shape":2,"data_offsets":[0,8]})"), f32x2),
       "shape is not an array"},
      {build(one(R"({"dtype":"F32","shape":[1.5],"data_offsets":[0,8]})"), f32x2),
       "shape holds 1.5"},
      {build(one(R"({"dtype":"F32","shape":[-2],"data_offsets":[0,8]})"), f32x2),
       "negative dimension -2"},
      {build(one(R"({"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,8]})"), f32x2),
       "shape [4611686018427387904, 4] is too large"},
      {build(one(R"({"dtype":"F32","shape":[0,18446744073709551615],"data_offsets":[0,0]})"), ""),
       "dimension 18446744073709551615 is too large"},
      {build(one(R"({"dtype":"F32","shape":[2],"data_offsets":[8]})"), f32x2),
       "not a pair of non-negative integers"},
      {build(one(R"({"dtype":"F32","shape":[2],"data_offsets":[-8,0]})"), f32x2),
       "not a pair of non-negative integers"},
      {build(one(R"({"dtype":"F32","shape":[2],"data_offsets":[0,8.0]})"), f32x2),
       "not a pair of non-negative integers"},
      {build(one(R"({"dtype":"F32","shape":[0],"data_offsets":[8,0]})"), f32x2), "reversed"},
      {build(one(R"({"dtype":"F32","shape":[2],"data_offsets":[0,4]})"), "xxxx"),
       "data_offsets [0, 4] hold 4 bytes but F32 [2] needs 8"},
      {build(one(R"({"dtype":"F32","shape":[2],"data_offsets":[0,8]})"), "xxxxx"),
       "truncated (header says 8 bytes of data, file has 5)"},
      {build(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
             R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
             std::string(12, 'x')),
       "tensors 'a' and 'b' overlap"},
      {build(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
             R"("b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
             std::string(12, 'x')),
       "4 unused bytes before tensor 'b'"},
      {build(one(R"({"dtype":"F32","shape":[1],"data_offsets":[0,4]})"), f32x2),
       "4 bytes of trailing garbage"},
      {build(R"({"__metadata__":{"k":1}})", ""), "metadata 'k' is not a string: 1"},
      {build(R"({"__metadata__":"k"})", ""), "__metadata__ is not an object"},
      {build(R"({"__metadata__":{"tensor_xxh3_64":"[1]"}})", ""),
       "metadata 'tensor_xxh3_64' is not a JSON object"},
      {build(R"({"__metadata__":{"tensor_xxh3_64":"{\"b\":\"0\"}"}})", ""),
       "checksum for tensor 'b', which the file does not hold"},
      {build(R"({"__metadata__":{"tensor_xxh3_64":"{}"},)" +
                 one(R"({"dtype":"F32","shape":[2],"data_offsets":[0,8]})").substr(1),
             f32x2),
       "tensor 'a' has no checksum"},
  };
  for (const Corrupt& c : cases) {
    SCOPED_TRACE(c.needle);
    expect_input_error(c.bytes, c.needle);
  }
}

class SafetensorsFuzz : public Safetensors {
 protected:
  std::string valid_file() {
    float w[3] = {1.f, 2.f, 3.f};
    uint16_t h[2] = {0x3c00, 0x4000};
    write_safetensors(path("v.safetensors"),
                      {{"w", DType::F32, {3}, w}, {"h", DType::F16, {1, 2}, h}}, {{"k", "v"}});
    return read_file(path("v.safetensors"));
  }
};

TEST_F(SafetensorsFuzz, EveryTruncationIsInputError) {
  std::string bytes = valid_file();
  for (size_t len = 0; len < bytes.size(); ++len) {
    SCOPED_TRACE(len);
    EXPECT_THROW(SafetensorsFile::open(put(bytes.substr(0, len))), InputError);
  }
}

TEST_F(SafetensorsFuzz, ByteFlipsNeverCrash) {
  std::string bytes = valid_file();
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (unsigned char v : {'\x00', '\xff', '"', '{', '}', ']', ',', '9', '-', ' '}) {
      std::string b = bytes;
      if (static_cast<unsigned char>(b[i]) == v) continue;
      b[i] = static_cast<char>(v);
      SCOPED_TRACE(fmt::format("byte {} = {:#x}", i, v));
      // The header length decides where the JSON ends and the data starts: any change breaks it.
      if (i < 8) {
        EXPECT_THROW(SafetensorsFile::open(put(b)), InputError);
      } else {
        open_or_input_error(b);
      }
    }
  }
}

}  // namespace
}  // namespace hwt
