// `hwt train --init`'s argument as a checkpoint: an hwt checkpoint as it is, a Hugging Face model
// folder imported (hwt import) into a temporary checkpoint that lives as long as this object.
#pragma once

#include <string>

namespace hwt {

class InitCheckpoint {
 public:
  // `given` empty: no init, path() empty. `notes`: print the import's lines.
  InitCheckpoint(const std::string& given, bool notes);
  ~InitCheckpoint();
  InitCheckpoint(const InitCheckpoint&) = delete;
  InitCheckpoint& operator=(const InitCheckpoint&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  bool temporary_ = false;
};

}  // namespace hwt
