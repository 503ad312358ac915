// `hwt export --format hf`: an hwt checkpoint into a Hugging Face model folder.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace hwt {

// transformers' default shard size for save_pretrained.
constexpr int64_t kDefaultShardBytes = int64_t{5} << 30;

struct ExportReport {
  std::string architecture;
  int64_t tensors = 0, bytes = 0, shards = 0;
  std::vector<std::string> tokenizer_files;  // written beside the weights
  std::string note;                          // why no tokenizer files were written
};

// Writes `dir`/config.json, the tokenizer's files (hf_tokenizer_files.h) and model.safetensors
// in `dtype` (F32, or BF16 or F16 rounded to nearest even, as models are often published;
// config.json's torch_dtype says which; a weight past fp16's range is an InputError), or
// shards of at most `shard_bytes` (a tensor larger than that gets a shard of its own) with
// model.safetensors.index.json, under the names transformers' from_pretrained expects for the
// architecture that holds the model (hf_architecture_for). The folder is built beside `dir` and
// renamed into place: `dir` must not exist or be empty, and a failure leaves nothing.
// InputError when no architecture holds the model. `progress(bytes, total)` is called as the
// tensors are written, when given.
ExportReport export_hf_model(
    const std::string& checkpoint, const std::string& dir, int64_t shard_bytes = kDefaultShardBytes,
    const std::function<void(int64_t bytes, int64_t total)>& progress = nullptr,
    DType dtype = DType::F32);

}  // namespace hwt
