// Errors carry a message meant for the user. InputError marks bad input (config, data,
// checkpoint, flag): the CLI prints it as one line and exits with code 2.
#pragma once

#include <fmt/format.h>

#include <cstdio>
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

// Training met a value that is not finite (NaN or infinity) and stopped: the CLI prints the
// diagnosis as one line and exits with code 3 (kNumericFaultExit).
class NumericFault : public Error {
 public:
  using Error::Error;
};
inline constexpr int kNumericFaultExit = 3;

// A backend could not allocate `bytes` (the machine has `available`, 0 when unknown). Callers
// that know which config keys asked for the memory turn it into an InputError naming them.
class OutOfMemory : public Error {
 public:
  OutOfMemory(const std::string& what, size_t bytes, size_t available)
      : Error(what), bytes_(bytes), available_(available) {}
  size_t bytes() const { return bytes_; }
  size_t available() const { return available_; }

 private:
  size_t bytes_, available_;
};

template <class... Args>
[[noreturn]] void fail_input(fmt::format_string<Args...> f, Args&&... args) {
  throw InputError(fmt::format(f, std::forward<Args>(args)...));
}

template <class... Args>
[[noreturn]] void fail(fmt::format_string<Args...> f, Args&&... args) {
  throw Error(fmt::format(f, std::forward<Args>(args)...));
}

// Something the user should know that does not stop the command: one line on stderr.
template <class... Args>
void warn(fmt::format_string<Args...> f, Args&&... args) {
  fmt::print(stderr, "hwt: warning: {}\n", fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace hwt

// Internal invariant: a failure here is a bug in hwt, not bad input.
#define HWT_CHECK(cond, ...)                                                           \
  do {                                                                                 \
    if (!(cond))                                                                       \
      ::hwt::fail("internal check failed at {}:{}: {}: {}", __FILE__, __LINE__, #cond, \
                  ::fmt::format(__VA_ARGS__));                                         \
  } while (0)
