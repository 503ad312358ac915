#include "cli/init_checkpoint.h"

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>

#include "interop/hf_import.h"

namespace hwt {

InitCheckpoint::InitCheckpoint(const std::string& given, bool notes) : path_(given) {
  namespace fs = std::filesystem;
  if (given.empty() || !fs::is_directory(given)) return;  // a checkpoint file (or nothing)
  path_ = (fs::temp_directory_path() / fmt::format("hwt-init-{}.safetensors", ::getpid())).string();
  temporary_ = true;
  const ImportReport r = import_hf_model(given, path_);
  if (!notes) return;
  for (const std::string& note : r.notes) fmt::print(stderr, "init: {}\n", note);
  fmt::print(stderr, "init: imported {} from {} ({} parameters)\n", r.architecture, given,
             r.parameters);
}

InitCheckpoint::~InitCheckpoint() {
  std::error_code ec;
  if (temporary_) std::filesystem::remove(path_, ec);
}

}  // namespace hwt
