// Model set-up stays linear in model size (issue 31: 100,000 layers used to hang).
#include <gtest/gtest.h>

#include <chrono>

#include "backend/cpu/cpu_backend.h"
#include "model/model.h"

namespace hwt {
namespace {

// Building a model is linear in its layers: 10,000 layers of a tiny model are built, planned and
// initialised in well under a second on one core (it was quadratic: 8,000 layers took 32 s,
// from a linear search for duplicate parameter names). This asserts the complexity, not a
// speed: the bound is ten times the goal, so a shared, slow machine still passes and a
// quadratic set-up (minutes) still fails.
TEST(ModelSetup, TenThousandLayersBuildInLinearTime) {
  CpuBackend cpu(1);
  ModelConfig m;
  m.vocab_size = 16;
  m.max_seq = 4;
  m.hidden = 4;
  m.heads = 1;
  m.ffn = 4;
  m.layers = 10'000;
  m.num_labels = 2;
  const auto start = std::chrono::steady_clock::now();
  Model model(m, cpu);
  model.plan(1, 4);
  model.init_parameters(1);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 10.0);
  EXPECT_GT(model.params().infos().size(), 10'000u);
}

}  // namespace
}  // namespace hwt
