#include "core/host_memory.h"

#include <fstream>
#include <sstream>
#include <string>

namespace hwt {

std::optional<uint64_t> available_host_memory() {
  std::ifstream in("/proc/meminfo");
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string key;
    uint64_t kib = 0;
    if (fields >> key >> kib && key == "MemAvailable:") return kib * 1024;
  }
  return std::nullopt;
}

}  // namespace hwt
