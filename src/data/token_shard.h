// A token shard: one token stream on disk, written once and memory-mapped by every later run.
//
// Layout (little-endian): a 64-byte header
//   0  "HWTTOKNS"          magic
//   8  uint32 version      kTokenShardVersion
//  12  uint32 width        bytes per id: 2 when every id of the vocabulary fits in uint16, else 4
//  16  uint64 count        ids in the payload
//  24  uint64 tokenizer    fingerprint of the tokenizer JSON below
//  32  uint64 corpus       fingerprint of the corpus bytes and of how they became one stream
//  40  uint64 checksum     fingerprint of the payload bytes
//  48  uint64 json_bytes   length of the tokenizer JSON that follows the header
//  56  uint64 payload_at   offset of the payload (a multiple of 8)
// then the tokenizer's JSON (its to_json() and hwt's version: what made the ids), zero padding, and
// the payload: `count` ids of `width` bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "data/token_stream.h"

namespace hwt {

inline constexpr uint32_t kTokenShardVersion = 1;

// What a shard was made from; a shard is only used for the identity it was written with.
struct TokenShardIdentity {
  std::string tokenizer_json;  // the tokenizer's to_json().dump(), with what else made the ids
  uint64_t corpus = 0;         // see the header's corpus field
};

// 2 when every id below vocab_size fits in uint16, else 4.
int token_width(int64_t vocab_size);

// Writes `ids` (each below vocab_size) to `path` atomically; hwt::Error when it cannot.
void write_token_shard(const std::string& path, const TokenShardIdentity& identity,
                       int64_t vocab_size, const TokenStream& ids);

// The shard at `path` when it exists; either its ids (mapped, not read) or why they cannot be
// used: another tokenizer or corpus, another version, a truncated file, a bad checksum.
struct OpenedShard {
  bool found = false;
  std::optional<TokenStream> tokens;
  std::string problem;  // set when found but unusable
};
OpenedShard open_token_shard(const std::string& path, const TokenShardIdentity& expected);

}  // namespace hwt
