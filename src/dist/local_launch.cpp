#include "dist/local_launch.h"

#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <thread>

#include "core/error.h"
#include "core/files.h"
#include "core/self_exec.h"
#include "dist/world.h"

namespace hwt {
namespace {

std::vector<std::string> own_command_line() {
  const std::string raw = read_file("/proc/self/cmdline");
  std::vector<std::string> args;
  std::string arg;
  for (char c : raw) {
    if (c != '\0') {
      arg += c;
      continue;
    }
    args.push_back(arg);
    arg.clear();
  }
  return args;
}

// A child: the environment is set here, after fork, so the parent's stays as it was.
[[noreturn]] void exec_rank(int rank, int ranks, const std::string& device,
                            const std::string& nccl_id_hex, const std::vector<std::string>& args) {
  setenv(kRankVar, std::to_string(rank).c_str(), 1);
  setenv(kWorldSizeVar, std::to_string(ranks).c_str(), 1);
  setenv(kNcclIdVar, nccl_id_hex.c_str(), 1);
  setenv("CUDA_VISIBLE_DEVICES", device.c_str(), 1);
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  exec_self(argv.data());
  std::perror("hwt: exec of a rank failed");
  std::_Exit(127);
}

int exit_code(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

}  // namespace

int run_local_ranks(int ranks, const std::vector<std::string>& extra_args,
                    const std::string& nccl_id_hex) {
  std::vector<std::string> args = own_command_line();
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  // The caller checked that `ranks` GPUs are visible, so every rank has an id.
  const std::vector<std::string> devices = local_gpu_ids(ranks);
  HWT_CHECK(std::ssize(devices) >= ranks, "{} GPU ids for {} ranks", devices.size(), ranks);
  std::map<pid_t, int> running;  // pid -> rank
  for (int r = 0; r < ranks; ++r) {
    const pid_t pid = fork();
    if (pid < 0) fail("fork of rank {} failed", r);
    if (pid == 0) exec_rank(r, ranks, devices[static_cast<size_t>(r)], nccl_id_hex, args);
    running[pid] = r;
  }
  int first_failure = 0;
  auto deadline = std::chrono::steady_clock::time_point::max();
  while (!running.empty()) {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, first_failure ? WNOHANG : 0);
    if (pid > 0) {
      const int rank = running[pid];
      running.erase(pid);
      const int code = exit_code(status);
      if (code != 0 && first_failure == 0) {
        first_failure = code;
        fmt::print(stderr, "hwt: error: rank {} failed (exit code {}); stopping the other ranks\n",
                   rank, code);
        for (const auto& [p, r] : running) kill(p, SIGTERM);
        deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      }
      continue;
    }
    if (std::chrono::steady_clock::now() > deadline)
      for (const auto& [p, r] : running) kill(p, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return first_failure;
}

}  // namespace hwt
