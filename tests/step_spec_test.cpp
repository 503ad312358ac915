// step_spec's stand-ins for what the data decides, and the analysis commands that take them
// without reading the data.
#include <gtest/gtest.h>

#include "cli_util.h"
#include "workload/trace_step.h"

namespace hwt {
namespace {

int64_t stand_in_vocab(const std::string& config, std::vector<std::string> sets = {}) {
  return step_spec(load_run_config(config, sets)).config.model.vocab_size;
}

TEST(StepSpec, AWordVocabularyLeftToTheDataIsDataMaxVocab) {
  EXPECT_EQ(stand_in_vocab("tt_atis"), 1000);  // the TTM table's 10·10·10 rows
  EXPECT_EQ(stand_in_vocab("tt_tiny"), 1200);
  EXPECT_EQ(stand_in_vocab("", {"data.max_vocab=5000"}), 5000);
  EXPECT_EQ(stand_in_vocab("", {}), RunConfig{}.data.max_vocab);
  EXPECT_EQ(stand_in_vocab("tt_atis", {"model.vocab_size=900"}), 900);  // a given size stands
  // A character tokenizer's size is the data's alone: BERT's vocabulary stands in.
  EXPECT_EQ(stand_in_vocab("shakespeare_char"), 30522);
}

// The analyses of the tensor-train ATIS model run as the config is, and answer as with the
// vocabulary given by hand.
TEST(StepSpec, AnalysesOfTtAtisNeedNoVocabularyFlag) {
  test::TempDir tmp("step_spec_tt_atis");
  for (const std::string args :
       {"memory --budget 6MB,22.5MB", "flops", "sim --accel u50 --batch 1 --dense",
        "estimate --gpu h200", "shape --gpu h200"}) {
    const std::string cmd = args + " --config tt_atis";
    const test::CliResult plain = test::run_hwt(cmd, tmp);
    EXPECT_EQ(plain.exit_code, 0) << cmd << ": " << plain.err;
    const test::CliResult given = test::run_hwt(cmd + " --set model.vocab_size=1000", tmp);
    EXPECT_EQ(given.exit_code, 0) << cmd << ": " << given.err;
    // hwt flops says which vocabulary it took; everything else is the same.
    const std::string note =
        "note: model.vocab_size is 0 (set by the tokenizer); using 1000 here\n";
    const std::string answer =
        plain.out.starts_with(note) ? plain.out.substr(note.size()) : plain.out;
    EXPECT_TRUE(answer == given.out) << cmd << ":\n" << plain.out << "\nagainst\n" << given.out;
  }
}

}  // namespace
}  // namespace hwt
