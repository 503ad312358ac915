// CPU package energy from Linux powercap (RAPL) counters, where the machine has them and they
// are readable (most kernels since 2020 let only root read them).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hwt {

class Rapl {
 public:
  // Finds the package zones under $HWT_POWERCAP_ROOT (default /sys/class/powercap).
  Rapl();

  bool ok() const { return ok_; }
  const std::string& reason() const { return reason_; }  // why not, when !ok()

  // Each package's counter in microjoules; empty if one cannot be read.
  std::optional<std::vector<uint64_t>> read() const;
  // Joules between two reads, across a counter wrap in each zone (the counters wrap at
  // max_energy_range_uj, within minutes to hours: read them more often than that).
  double joules(const std::vector<uint64_t>& from, const std::vector<uint64_t>& to) const;

 private:
  struct Zone {
    std::string energy_file;
    uint64_t range_uj = 0;
  };
  std::vector<Zone> zones_;
  bool ok_ = false;
  std::string reason_;
};

}  // namespace hwt
