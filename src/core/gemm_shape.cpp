#include "core/gemm_shape.h"

#include <fmt/format.h>

namespace hwt {

std::string shape_label(const GemmShape& s) {
  const std::string mnk = fmt::format("{}x{}x{}", s.m, s.n, s.k);
  return s.batch > 1 ? fmt::format("{}x({})", s.batch, mnk) : mnk;
}

}  // namespace hwt
