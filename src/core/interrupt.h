// SIGINT and SIGTERM as a request to stop at the next safe point: a long command (hwt train)
// installs the handlers, polls interrupt_signal() between units of work, saves what it has and
// exits with 128 + the signal. A second signal exits at once (the user insists).
#pragma once

#include <string>

namespace hwt {

// Installs the handlers for SIGINT and SIGTERM.
void install_interrupt_handlers();
// The first signal received since install_interrupt_handlers(), or 0.
int interrupt_signal();
// "SIGINT" or "SIGTERM" ("another signal" otherwise).
const char* signal_name(int sig);
// SIGINT or SIGTERM from its signal_name (0 otherwise).
int signal_number(const std::string& name);

}  // namespace hwt
