#include "measure/host_info.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

namespace hwt {
namespace {

// Value of the first "key : value" line of a /proc file.
std::string proc_field(const char* file, const std::string& key) {
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key, 0) == 0) {
      const size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      const size_t start = line.find_first_not_of(" \t", colon + 1);
      return start == std::string::npos ? "" : line.substr(start);
    }
  return "";
}

}  // namespace

nlohmann::json host_info() {
  utsname u{};
  uname(&u);
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return {{"cpu", proc_field("/proc/cpuinfo", "model name")},
          {"logical_cores", std::thread::hardware_concurrency()},
          {"memory_gib", static_cast<double>(pages) * static_cast<double>(page) / (1ull << 30)},
          {"os", std::string(u.sysname) + " " + u.release},
          {"host", std::string(u.nodename)}};
}

}  // namespace hwt
