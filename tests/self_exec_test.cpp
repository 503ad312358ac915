// hwt runs itself again at start (OMP_WAIT_POLICY, core/self_exec.h) and keeps its own name
// doing so: ps, pgrep and the kernel's messages show `hwt`, not `exe`.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <thread>

#include "cli_util.h"

namespace hwt {
namespace {

using test::TempDir;

// Whether the process has run itself again: the variable the restart sets is in the
// environment its current program started with.
bool restarted(pid_t pid) {
  const std::string env = test::slurp("/proc/" + std::to_string(pid) + "/environ");
  return env.find(std::string("OMP_WAIT_POLICY=passive\0", 24)) != std::string::npos;
}

TEST(SelfExec, TheRestartedProcessIsNamedHwt) {
  TempDir dir("self_exec");
  // hwt blocks opening the config until the test opens the other end, so its name can be read
  // while it waits, after the restart.
  const std::string fifo = dir / "config.toml";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string err = dir / "err";
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    unsetenv("OMP_WAIT_POLICY");  // else hwt does not restart
    unsetenv("GOMP_SPINCOUNT");
    const int fd = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, STDERR_FILENO);
    execl(HWT_BINARY, HWT_BINARY, "flops", "--config", fifo.c_str(), nullptr);
    _exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!restarted(pid) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(restarted(pid)) << "hwt did not restart with OMP_WAIT_POLICY=passive";
  EXPECT_EQ(test::slurp("/proc/" + std::to_string(pid) + "/comm"), "hwt\n");
  // An unknown key: the restarted hwt reports it and exits with code 2. Opening without
  // blocking fails until hwt has opened its end, so a dead hwt cannot hang the test.
  int w = -1;
  while (w < 0 && std::chrono::steady_clock::now() < deadline) {
    w = open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (w < 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (w < 0) kill(pid, SIGKILL);
  ASSERT_GE(w, 0) << "hwt never opened its config";
  const std::string bad = "[model]\nhiden = 64\n";
  EXPECT_EQ(write(w, bad.data(), bad.size()), static_cast<ssize_t>(bad.size()));
  close(w);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 2) << status;
  EXPECT_EQ(test::slurp(err).rfind("hwt: error: unknown config key 'model.hiden'", 0), 0u)
      << test::slurp(err);
}

}  // namespace
}  // namespace hwt
