#include "data/token_shard.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <vector>

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
                       int64_t vocab_size, const TokenStream& ids) {
  const int width = token_width(vocab_size);
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.version = kTokenShardVersion;
  h.width = static_cast<uint32_t>(width);
  h.count = ids.size();
  h.tokenizer = fingerprint(identity.tokenizer_json);
  h.corpus = identity.corpus;
  h.json_bytes = identity.tokenizer_json.size();
  h.payload_at = payload_offset(h.json_bytes);
  AtomicFileWriter w(path);
  w.write(&h, sizeof h);  // written again below with the payload's checksum
  w.write(identity.tokenizer_json);
  w.write(std::string(h.payload_at - sizeof h - h.json_bytes, '\0'));
  // The payload a chunk at a time, read from wherever the stream holds its ids.
  constexpr size_t kChunk = size_t{1} << 20;
  std::vector<int32_t> chunk;
  std::vector<uint16_t> narrow;
  uint64_t checksum = kFingerprintStart;
  for (size_t first = 0; first < ids.size(); first += kChunk) {
    chunk.resize(std::min(kChunk, ids.size() - first));
    ids.read(static_cast<int64_t>(first), std::ssize(chunk), chunk.data());
    narrow.clear();
    for (const int32_t id : chunk) {
      HWT_CHECK(id >= 0 && id < vocab_size, "token id {} outside a vocabulary of {}", id,
                vocab_size);
      if (width == 2) narrow.push_back(static_cast<uint16_t>(id));
    }
    const std::string_view payload = width == 2 ? bytes_of(narrow.data(), narrow.size() * 2)
                                                : bytes_of(chunk.data(), chunk.size() * 4);
    checksum = fingerprint(payload, checksum);
    w.write(payload);
  }
  h.checksum = checksum;
  w.write_at(0, bytes_of(&h, sizeof h));
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
