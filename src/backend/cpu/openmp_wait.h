// The OpenMP wait policy of CPU runs.
#pragma once

namespace hwt {

// Runs the program again (same arguments) with OMP_WAIT_POLICY=passive unless the environment
// already sets OMP_WAIT_POLICY or GOMP_SPINCOUNT. libgomp reads the policy once, when it loads,
// and by default lets idle workers spin; on a machine with few cores those spinning workers take
// the cores that OpenBLAS's own threads need between our parallel loops (on 2 cores: 1.5x
// slower training steps, docs/benchmarks.md). Returns only if it did not restart.
void restart_with_passive_openmp_wait(char** argv);

}  // namespace hwt
