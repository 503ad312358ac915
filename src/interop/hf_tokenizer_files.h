// The tokenizer files of a Hugging Face model folder, in and out (docs/interop.md): BERT's
// vocab.txt (with tokenizer_config.json's do_lower_case), a tokenizer.json, GPT-2's vocab.json
// and merges.txt.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "data/tokenizer.h"

namespace hwt {

struct FolderTokenizer {
  nlohmann::json json;  // Tokenizer::to_json(), the file embedded; null when none was read
  std::string note;     // what was read, or why nothing was
};

// The folder's tokenizer, first found of: vocab.txt (WordPiece), tokenizer.json (hf),
// vocab.json + merges.txt (GPT-2's own vocabulary only). None, or one hwt cannot read, is a
// note, not an error; InputError when the tokenizer has more tokens than `vocab_size`.
FolderTokenizer read_folder_tokenizer(const std::string& dir, int64_t vocab_size);

// Writes `tok`'s files into `dir` in the format Hugging Face reads for its kind (wordpiece:
// vocab.txt and tokenizer_config.json; hf: tokenizer.json; gpt2: vocab.json and merges.txt),
// each with a special_tokens_map.json of the roles the tokenizer states; returns the names
// written. A char or word tokenizer has no such format: nothing is written
// and `note` says so.
std::vector<std::string> write_folder_tokenizer(const Tokenizer& tok, const std::string& dir,
                                                int64_t max_length, std::string& note);

}  // namespace hwt
