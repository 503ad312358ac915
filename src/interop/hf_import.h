// `hwt import`: a Hugging Face model folder into an hwt checkpoint.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace hwt {

struct ImportReport {
  std::string architecture;
  int64_t parameters = 0;          // written to the checkpoint
  std::vector<std::string> notes;  // what hwt changed, left out or initialised fresh
};

// Reads config.json, the weights and the tokenizer files (hf_tokenizer_files.h) of `dir` and
// writes the checkpoint `out` (fp32 master weights, the tokenizer embedded; no optimizer state,
// step 0), piece by piece from the memory-mapped shards (hwt_piece_from_hf): the import holds
// the writer's pieces, never a whole tensor. Every check (architecture, config values, each
// tensor's presence, shape and dtype, no tensor left over) runs before anything is written;
// InputError naming the first failure, and `out` is then untouched.
// `progress(bytes, total)` is called as the converted weights are read, when given.
ImportReport import_hf_model(
    const std::string& dir, const std::string& out,
    const std::function<void(int64_t bytes, int64_t total)>& progress = nullptr);

}  // namespace hwt
