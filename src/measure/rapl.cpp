#include "measure/rapl.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace hwt {
namespace {

namespace fs = std::filesystem;

std::optional<uint64_t> read_number(const std::string& file) {
  std::ifstream in(file);
  uint64_t v = 0;
  if (!(in >> v)) return std::nullopt;
  return v;
}

std::string first_line(const fs::path& file) {
  std::ifstream in(file);
  std::string s;
  std::getline(in, s);
  return s;
}

}  // namespace

Rapl::Rapl() {
  const char* env = std::getenv("HWT_POWERCAP_ROOT");
  const fs::path root = env && *env ? env : "/sys/class/powercap";
  std::error_code ec;
  std::vector<fs::path> packages;
  for (const auto& e : fs::directory_iterator(root, ec)) {
    const std::string n = e.path().filename().string();
    // Top-level zones ("intel-rapl:0", no sub-zone suffix) named package-N; psys and the
    // core/dram sub-zones would count the same energy twice.
    if (n.starts_with("intel-rapl:") && n.find(':', 11) == std::string::npos &&
        first_line(e.path() / "name").starts_with("package"))
      packages.push_back(e.path());
  }
  if (packages.empty()) {
    reason_ = fmt::format("no RAPL package zones under {}", root.string());
    return;
  }
  std::sort(packages.begin(), packages.end());
  for (const fs::path& p : packages) {
    Zone z{(p / "energy_uj").string(), 0};
    if (!read_number(z.energy_file)) {
      std::ifstream probe(z.energy_file);
      reason_ = fmt::format("cannot read {}: {}", z.energy_file,
                            probe ? "not a number" : std::strerror(errno));
      return;
    }
    const auto range = read_number((p / "max_energy_range_uj").string());
    if (!range || *range == 0) {
      reason_ = fmt::format("cannot read {}", (p / "max_energy_range_uj").string());
      return;
    }
    z.range_uj = *range;
    zones_.push_back(z);
  }
  ok_ = true;
}

std::optional<std::vector<uint64_t>> Rapl::read() const {
  std::vector<uint64_t> v;
  for (const Zone& z : zones_) {
    const auto uj = read_number(z.energy_file);
    if (!uj) return std::nullopt;
    v.push_back(*uj);
  }
  return v;
}

double Rapl::joules(const std::vector<uint64_t>& from, const std::vector<uint64_t>& to) const {
  double uj = 0;
  for (size_t i = 0; i < zones_.size() && i < from.size() && i < to.size(); ++i)
    uj += static_cast<double>(to[i] >= from[i] ? to[i] - from[i]
                                               : zones_[i].range_uj - from[i] + to[i]);
  return uj / 1e6;
}

}  // namespace hwt
