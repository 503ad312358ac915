#include "core/self_exec.h"

#include <unistd.h>

#include <filesystem>
#include <string>

namespace hwt {

void exec_self(char* const argv[]) {
  std::error_code ec;
  const std::string own = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (!ec) execv(own.c_str(), argv);
  execv("/proc/self/exe", argv);
}

}  // namespace hwt
