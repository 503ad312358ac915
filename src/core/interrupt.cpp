#include "core/interrupt.h"

#include <unistd.h>

#include <atomic>
#include <csignal>

#include "core/error.h"

namespace hwt {
namespace {

// Lock-free atomics are async-signal-safe. The test and the set are one step: a second signal
// that arrives while the first one's handler runs (it may interrupt it) must still see the first.
std::atomic<int> received{0};
static_assert(std::atomic<int>::is_always_lock_free);

// Only async-signal-safe calls here: the second signal ends the process without unwinding.
extern "C" void on_interrupt(int sig) {
  int none = 0;
  if (!received.compare_exchange_strong(none, sig)) ::_exit(128 + sig);
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
  return received.load();
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
