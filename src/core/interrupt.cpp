#include "core/interrupt.h"

#include <unistd.h>

#include <csignal>

#include "core/error.h"

namespace hwt {
namespace {

volatile std::sig_atomic_t received = 0;

// Only async-signal-safe calls here: the second signal ends the process without unwinding.
extern "C" void on_interrupt(int sig) {
  if (received != 0) ::_exit(128 + sig);
  received = sig;
}

}  // namespace

void install_interrupt_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;  // reads and writes in flight carry on
  for (int sig : {SIGINT, SIGTERM})
    if (::sigaction(sig, &sa, nullptr) != 0) fail("cannot install the handler of signal {}", sig);
}

int interrupt_signal() {
  return received;
}

int signal_number(const std::string& name) {
  for (int sig : {SIGINT, SIGTERM})
    if (name == signal_name(sig)) return sig;
  return 0;
}

const char* signal_name(int sig) {
  switch (sig) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    default:
      return "another signal";
  }
}

}  // namespace hwt
