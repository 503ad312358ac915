// The CPU backend's GEMMs run on its own OpenMP pool: hwt links the OpenMP build of OpenBLAS
// (CMakeLists.txt). A pthread build would keep a second pool competing for the cores.
#include <cblas.h>
#include <gtest/gtest.h>

namespace hwt {
namespace {

TEST(CpuBlas, GemmsRunOnTheOpenMpPool) {
#if defined(__clang__)
  GTEST_SKIP() << "clang builds (fuzz, sanitizers) link the default OpenBLAS build";
#else
  EXPECT_EQ(openblas_get_parallel(), 2) << "0: sequential, 1: pthreads, 2: OpenMP";
#endif
}

}  // namespace
}  // namespace hwt
