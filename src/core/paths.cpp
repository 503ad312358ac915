#include "core/paths.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "core/error.h"

namespace hwt {
namespace {

std::vector<std::filesystem::path> roots() {
  std::vector<std::filesystem::path> r;
  if (const char* home = std::getenv("HWT_HOME")) r.emplace_back(home);
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) r.push_back(exe.parent_path().parent_path());
  r.emplace_back(HWT_SOURCE_DIR);
  return r;
}

}  // namespace

std::optional<std::string> find_shipped_file(const std::string& relative) {
  for (const auto& root : roots()) {
    const auto p = root / relative;
    std::error_code ec;
    if (std::filesystem::exists(p, ec)) return p.string();
  }
  return std::nullopt;
}

std::string require_shipped_file(const std::string& relative) {
  if (auto p = find_shipped_file(relative)) return *p;
  std::string where;
  for (const auto& root : roots()) where += (where.empty() ? "" : ", ") + root.string();
  fail_input("{} not found (looked under {}; set HWT_HOME to the hwt folder)", relative, where);
}

std::string resolve_named_file(const std::string& arg, const std::string& folder,
                               const std::string& flag) {
  std::error_code ec;
  if (std::filesystem::exists(arg, ec) || arg.find('/') != std::string::npos ||
      arg.ends_with(".toml"))
    return arg;
  std::string name = arg;
  std::replace(name.begin(), name.end(), '-', '_');
  if (auto found = find_shipped_file(folder + "/" + name + ".toml")) return *found;
  std::vector<std::string> names;
  if (auto dir = find_shipped_file(folder))
    for (const auto& e : std::filesystem::directory_iterator(*dir, ec))
      if (e.path().extension() == ".toml") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
  fail_input("{} '{}' is neither a file nor a shipped name ({})", flag, arg, list);
}

std::string user_cache_dir() {
  if (const char* d = std::getenv("HWT_CACHE_DIR"); d && *d) return d;
  if (const char* d = std::getenv("XDG_CACHE_HOME"); d && *d)
    return (std::filesystem::path(d) / "hwt").string();
  if (const char* h = std::getenv("HOME"); h && *h)
    return (std::filesystem::path(h) / ".cache" / "hwt").string();
  return ".hwt-cache";
}

}  // namespace hwt
