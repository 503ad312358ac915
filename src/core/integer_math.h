// Rounding of sizes and counts (a >= 0, b > 0), on the host and in CUDA kernels. The result has
// the type `(a + b - 1) / b` has in C++ (the common type of a and b), so int arithmetic stays int.
#pragma once

#include <type_traits>

#include "core/hostdevice.h"

namespace hwt {

template <class A, class B>
HWT_HD constexpr std::common_type_t<A, B> ceil_div(A a, B b) {
  static_assert(std::is_integral_v<A> && std::is_integral_v<B>);
  using T = std::common_type_t<A, B>;
  return (static_cast<T>(a) + static_cast<T>(b) - 1) / static_cast<T>(b);
}

// a rounded up to a multiple of b.
template <class A, class B>
HWT_HD constexpr std::common_type_t<A, B> round_up(A a, B b) {
  return ceil_div(a, b) * static_cast<std::common_type_t<A, B>>(b);
}

}  // namespace hwt
