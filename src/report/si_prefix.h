// Numbers for people to read in tables and summaries: scaled to an SI prefix.
#pragma once

#include <string>
#include <string_view>

namespace hwt {

// v divided by 1000 until below 1000 (at most 10^15, P), with `digits` significant digits and
// the prefix: "1.23G" without a unit, "12.5 MB" with unit "B" ("512 B" needs no prefix).
std::string si_prefixed(double v, int digits = 3, std::string_view unit = "");

}  // namespace hwt
