#include "backend/cpu/openmp_wait.h"

#include <cstdlib>

#include "core/self_exec.h"

namespace hwt {

void restart_with_passive_openmp_wait(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT")) return;
  if (setenv("OMP_WAIT_POLICY", "passive", 1) != 0) return;
  exec_self(argv);  // returns only on failure: carry on with the default policy
}

}  // namespace hwt
