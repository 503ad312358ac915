#include "data/token_shard.h"

#include <fmt/format.h>

#include <bit>
#include <cstring>
#include <filesystem>
#include <string_view>

#include "core/error.h"
#include "core/files.h"
#include "core/fingerprint.h"

namespace hwt {
namespace {

static_assert(std::endian::native == std::endian::little,
              "token shards are little-endian and written as the host stores integers");

constexpr char kMagic[8] = {'H', 'W', 'T', 'T', 'O', 'K', 'N', 'S'};

struct Header {
  char magic[8];
  uint32_t version, width;
  uint64_t count, tokenizer, corpus, checksum, json_bytes, payload_at;
};
static_assert(sizeof(Header) == 64);

uint64_t payload_offset(uint64_t json_bytes) {
  return (sizeof(Header) + json_bytes + 7) / 8 * 8;
}

std::string_view bytes_of(const void* p, size_t n) {
  return {static_cast<const char*>(p), n};
}

}  // namespace

int token_width(int64_t vocab_size) {
  return vocab_size <= 65536 ? 2 : 4;
}

void write_token_shard(const std::string& path, const TokenShardIdentity& identity,
                       int64_t vocab_size, const std::vector<int32_t>& ids) {
  const int width = token_width(vocab_size);
  std::vector<uint16_t> narrow;
  if (width == 2) narrow.reserve(ids.size());
  for (const int32_t id : ids) {
    HWT_CHECK(id >= 0 && id < vocab_size, "token id {} outside a vocabulary of {}", id, vocab_size);
    if (width == 2) narrow.push_back(static_cast<uint16_t>(id));
  }
  const std::string_view payload = width == 2 ? bytes_of(narrow.data(), narrow.size() * 2)
                                              : bytes_of(ids.data(), ids.size() * 4);
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.version = kTokenShardVersion;
  h.width = static_cast<uint32_t>(width);
  h.count = ids.size();
  h.tokenizer = fingerprint(identity.tokenizer_json);
  h.corpus = identity.corpus;
  h.checksum = fingerprint(payload);
  h.json_bytes = identity.tokenizer_json.size();
  h.payload_at = payload_offset(h.json_bytes);
  AtomicFileWriter w(path);
  w.write(&h, sizeof h);
  w.write(identity.tokenizer_json);
  w.write(std::string(h.payload_at - sizeof h - h.json_bytes, '\0'));
  w.write(payload);
  w.commit();
}

OpenedShard open_token_shard(const std::string& path, const TokenShardIdentity& expected) {
  OpenedShard out;
  if (!std::filesystem::exists(path)) return out;
  std::shared_ptr<const MappedFile> file = MappedFile::open(path, "token shard");
  out.found = true;
  const auto problem = [&](std::string why) {
    out.problem = std::move(why);
    return out;
  };
  Header h{};
  if (file->size() < sizeof h) return problem("truncated header");
  std::memcpy(&h, file->data(), sizeof h);
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) return problem("not a token shard");
  if (h.version != kTokenShardVersion)
    return problem(fmt::format("format version {}, not {}", h.version, kTokenShardVersion));
  if (h.width != 2 && h.width != 4) return problem(fmt::format("token width {}", h.width));
  // Sizes are checked before they are multiplied, so a garbled header cannot overflow them.
  if (h.json_bytes > file->size() || h.payload_at != payload_offset(h.json_bytes) ||
      h.count > file->size() || file->size() != h.payload_at + h.count * h.width)
    return problem(fmt::format("{} bytes where the header promises {} ids", file->size(), h.count));
  if (h.tokenizer != fingerprint(expected.tokenizer_json))
    return problem("made by another tokenizer");
  if (h.corpus != expected.corpus) return problem("made from another corpus");
  const auto* payload = reinterpret_cast<const std::byte*>(file->data()) + h.payload_at;
  if (fingerprint(bytes_of(payload, h.count * h.width)) != h.checksum)
    return problem("payload checksum mismatch");
  out.tokens.emplace(std::move(file), payload, static_cast<int>(h.width),
                     static_cast<size_t>(h.count));
  return out;
}

}  // namespace hwt
