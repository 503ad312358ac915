// The tensors of a Hugging Face model folder: model.safetensors, or the shards a
// model.safetensors.index.json lists, each memory-mapped (SafetensorsFile), so a tensor's bytes
// are read from disk when it is converted and a model larger than memory can be imported.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/safetensors.h"

namespace hwt {

class HfWeights {
 public:
  // InputError when the folder has neither file, a shard is unreadable, or the index lists a
  // tensor its shard lacks.
  explicit HfWeights(const std::string& dir);

  bool contains(const std::string& name) const { return where_.count(name) != 0; }
  SafetensorsFile::View get(const std::string& name) const;
  std::vector<std::string> names() const;  // sorted
  // "model.safetensors" or the shard holding `name`, for messages.
  const std::string& file_of(const std::string& name) const;

 private:
  std::vector<SafetensorsFile> files_;
  std::vector<std::string> file_names_;
  std::map<std::string, size_t> where_;
};

}  // namespace hwt
