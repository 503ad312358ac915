#include "report/si_prefix.h"

#include <fmt/format.h>

namespace hwt {

std::string si_prefixed(double v, int digits, std::string_view unit) {
  static constexpr const char* kPrefixes[] = {"", "K", "M", "G", "T", "P"};
  int p = 0;
  while (v >= 1000 && p < 5) v /= 1000, ++p;
  return fmt::format("{:.{}g}{}{}{}", v, digits, unit.empty() ? "" : " ", kPrefixes[p], unit);
}

}  // namespace hwt
