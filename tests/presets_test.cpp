// The shipped model presets are the published models, parameter for parameter: each count is the
// one its model card or paper publishes (cited in the preset's comment), so a preset that drifts
// from its model fails here.
#include <gtest/gtest.h>

#include "cli_util.h"

#include <filesystem>

#include "backend/trace/trace_backend.h"
#include "config/run_config.h"
#include "model/model.h"
#include "workload/trace_step.h"

namespace hwt {
namespace {

struct Published {
  const char* preset;
  int64_t parameters;
};

class Presets : public ::testing::TestWithParam<Published> {};

TEST_P(Presets, HaveTheirPublishedParameterCount) {
  const Published p = GetParam();
  TraceBackend be;
  Model model(load_run_config(p.preset, {}).model, be);
  EXPECT_EQ(model.params().parameters(), p.parameters);
}

INSTANTIATE_TEST_SUITE_P(
    Published, Presets,
    ::testing::Values(Published{"llama_7b", 6738415616}, Published{"llama2_7b", 6738415616},
                      Published{"llama3_8b", 8030261248}, Published{"llama3.2_1b", 1235814400},
                      Published{"mistral_7b", 7241732096}, Published{"qwen2.5_0.5b", 494032768},
                      Published{"qwen2.5_7b", 7615616512}, Published{"smollm_135m", 134515008},
                      Published{"smollm_360m", 361821120}, Published{"tinyllama_1.1b", 1100048384},
                      Published{"pythia_410m", 405334016}, Published{"pythia_1.4b", 1414647808},
                      Published{"neox_20b", 20554567680}),
    [](const auto& param) {
      std::string name = param.param.preset;
      for (char& ch : name)
        if (ch == '.') ch = '_';
      return name;
    });

// Every shipped run config loads and traces a step (the co-design spaces and the compare plans,
// whose runs are listed as [[run]] tables, are not run configs).
TEST(Presets, EveryShippedConfigTracesAStep) {
  int traced = 0;
  for (const auto& e :
       std::filesystem::directory_iterator(std::string(HWT_SOURCE_DIR) + "/configs")) {
    const std::string name = e.path().stem().string();
    if (e.path().extension() != ".toml" || name.starts_with("codesign_")) continue;
    if (test::slurp(e.path()).find("\n[[run]]") != std::string::npos) continue;
    const RunConfig c = load_run_config(e.path().string(), {});
    const Workload w = trace_step(step_spec(c, 1, std::min<int64_t>(64, c.data.max_len)));
    EXPECT_GT(w.parameters, 0) << name;
    ++traced;
  }
  EXPECT_GE(traced, 30);
}

}  // namespace
}  // namespace hwt
