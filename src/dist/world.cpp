#include "dist/world.h"

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "core/error.h"

namespace hwt {
namespace {

// The variable's value as an integer; fallback when it is unset.
int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  int n = -1;
  const char* end = v + std::strlen(v);
  if (std::from_chars(v, end, n).ptr != end || n < 0 || n > (1 << 20))
    fail_input("environment variable {}='{}' is not a rank or a count", name, v);
  return n;
}

World from_vars(const char* rank, const char* size, const char* local_rank, const char* local_size,
                Launcher launcher) {
  World w;
  w.launcher = launcher;
  w.rank = env_int(rank, 0);
  w.size = env_int(size, 1);
  w.local_rank = local_rank ? env_int(local_rank, w.rank) : w.rank;
  w.local_size = local_size ? env_int(local_size, w.size) : w.size;
  if (w.size < 1 || w.rank >= w.size || w.local_rank >= w.local_size)
    fail_input("environment: rank {} of {} (local {} of {}) is not a valid place in a job", w.rank,
               w.size, w.local_rank, w.local_size);
  return w;
}

}  // namespace

World detect_world() {
  if (std::getenv(kWorldSizeVar))
    return from_vars(kRankVar, kWorldSizeVar, nullptr, nullptr, Launcher::Hwt);
  if (std::getenv("OMPI_COMM_WORLD_SIZE"))
    return from_vars("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
                     "OMPI_COMM_WORLD_LOCAL_SIZE", Launcher::Mpi);
  // srun starts every task with SLURM_PROCID; a batch script's own process has it too, with
  // one task, and is a plain single run.
  if (env_int("SLURM_NTASKS", 1) > 1 && std::getenv("SLURM_PROCID"))
    return from_vars("SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", nullptr, Launcher::Mpi);
  return World{};
}

std::vector<std::string> local_gpu_ids(int ranks) {
  std::vector<std::string> ids;
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES")) {
    std::stringstream list(v);
    for (std::string d; std::getline(list, d, ',');) ids.push_back(d);
    return ids;
  }
  for (int i = 0; i < ranks; ++i) ids.push_back(std::to_string(i));
  return ids;
}

}  // namespace hwt
