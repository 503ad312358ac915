#include "measure/host_info.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <thread>

#include "core/error.h"
#include "core/files.h"

namespace hwt {
namespace {

// Value of the first "key : value" line of a /proc file; empty when there is none.
std::string proc_field(const char* file, std::string_view key) {
  std::string text;
  try {
    text = read_file(file);
  } catch (const InputError&) {
    return "";
  }
  for (size_t at = 0; at < text.size();) {
    const size_t end = std::min(text.find('\n', at), text.size());
    const std::string_view line = std::string_view(text).substr(at, end - at);
    at = end + 1;
    const size_t colon = line.find(':');
    if (!line.starts_with(key) || colon == std::string_view::npos) continue;
    const size_t start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string_view::npos ? "" : std::string(line.substr(start));
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
