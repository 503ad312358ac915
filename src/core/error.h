// Errors carry a message meant for the user. InputError marks bad input (config, data,
// checkpoint, flag): the CLI prints it as one line and exits with code 2.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace hwt {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class InputError : public Error {
 public:
  using Error::Error;
};

template <class... Args>
[[noreturn]] void fail_input(fmt::format_string<Args...> f, Args&&... args) {
  throw InputError(fmt::format(f, std::forward<Args>(args)...));
}

template <class... Args>
[[noreturn]] void fail(fmt::format_string<Args...> f, Args&&... args) {
  throw Error(fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace hwt

// Internal invariant: a failure here is a bug in hwt, not bad input.
#define HWT_CHECK(cond, ...)                                                           \
  do {                                                                                 \
    if (!(cond))                                                                       \
      ::hwt::fail("internal check failed at {}:{}: {}: {}", __FILE__, __LINE__, #cond, \
                  ::fmt::format(__VA_ARGS__));                                         \
  } while (0)
