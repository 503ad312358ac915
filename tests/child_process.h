// The hwt binary as a child process the test can signal, kill or limit while it runs.
#pragma once

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cli_util.h"

namespace hwt::test {

struct SpawnOptions {
  // RLIMIT_FSIZE in bytes (0: none). Writes past it fail with EFBIG, as on a full disk: SIGXFSZ,
  // which would otherwise kill the child, is ignored (an ignored signal stays ignored over exec).
  rlim_t file_size_limit = 0;
};

// `hwt <args>` started as a child process, its output into dir/.child_stdout and .child_stderr.
inline pid_t spawn_hwt(const std::vector<std::string>& args, const TempDir& dir,
                       const SpawnOptions& options = {}) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::vector<char*> argv = {const_cast<char*>(HWT_BINARY)};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    if (!std::freopen((dir / ".child_stdout").c_str(), "w", stdout) ||
        !std::freopen((dir / ".child_stderr").c_str(), "w", stderr))
      ::_exit(127);
    if (options.file_size_limit > 0) {
      const rlimit limit = {options.file_size_limit, options.file_size_limit};
      if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) ::_exit(127);
      ::signal(SIGXFSZ, SIG_IGN);
    }
    ::execv(HWT_BINARY, argv.data());
    ::_exit(127);
  }
  return pid;
}

// The exit code of `pid` once it exits within `limit` (-1 when a signal ended it); nullopt while
// it still runs after `limit`.
inline std::optional<int> exit_within(pid_t pid, std::chrono::milliseconds limit) {
  using namespace std::chrono;
  for (const auto until = steady_clock::now() + limit;;) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid)
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (steady_clock::now() >= until) return std::nullopt;
    std::this_thread::sleep_for(milliseconds(2));
  }
}

// The exit code of `pid`, or -1 when it did not exit within `limit` (it is then killed) or a
// signal ended it.
inline int wait_exit(pid_t pid, std::chrono::milliseconds limit = std::chrono::minutes(1)) {
  if (const std::optional<int> code = exit_within(pid, limit)) return *code;
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  return -1;
}

}  // namespace hwt::test
