// Parity with transformers itself, in both directions (tests/oracle/hf_transformers.py):
// - import: small random models of every architecture hwt imports, saved by save_pretrained,
//   give transformers' float32 logits, loss and 64 greedy tokens once imported;
// - export: hwt checkpoints exported and loaded by from_pretrained (nothing missing or
//   unexpected) give hwt's logits (the folders of tests/interop_roundtrip_test.cpp);
// - fine-tuning: 50 AdamW steps from an imported Llama on the same random batches give
//   transformers' losses.
// The script runs where transformers is installed (the GPU machine); tests/fixtures/
// hf_transformers holds what one run wrote (HWT_TRANSFORMERS_RECORD, scripts/gpu_check.sh
// interop), for the CPU CI: the import cases under their names, the exported folders as
// export_NAME, and the fine-tune.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "transformers_parity.h"

namespace hwt {
namespace {

const std::filesystem::path kFixtures =
    std::filesystem::path(HWT_TEST_DIR) / "fixtures" / "hf_transformers";

std::set<std::filesystem::path> folders(const std::filesystem::path& root) {
  std::set<std::filesystem::path> out;  // sorted: the same order on every machine
  for (const auto& entry : std::filesystem::directory_iterator(root))
    if (entry.is_directory()) out.insert(entry.path());
  return out;
}

bool is_export(const std::filesystem::path& dir) {
  return dir.filename().string().rfind("export_", 0) == 0;
}
bool is_finetune(const std::filesystem::path& dir) {
  return dir.filename() == "finetune_llama";
}

// Every architecture hwt imports, as transformers saved it (the oracle's cases), is committed.
TEST(TransformersParity, CommittedImportFolders) {
  int n = 0;
  for (const auto& dir : folders(kFixtures)) {
    if (is_export(dir) || is_finetune(dir)) continue;
    SCOPED_TRACE(dir.filename().string());
    test::expect_import_matches_transformers(dir);
    ++n;
  }
  EXPECT_GE(n, 10) << "import cases committed in " << kFixtures;
}

// hwt's exports (tests/interop_roundtrip_test.cpp) as transformers loaded them.
TEST(TransformersParity, CommittedExportFolders) {
  int n = 0;
  for (const auto& dir : folders(kFixtures)) {
    if (!is_export(dir)) continue;
    SCOPED_TRACE(dir.filename().string());
    test::expect_export_matches_transformers(dir);
    ++n;
  }
  EXPECT_GE(n, 9) << "exported folders committed in " << kFixtures;
}

// Recorded on the GPU machine (transformers 5.17.0, torch 2.11.0; finetune.json says so).
TEST(TransformersParity, CommittedFineTune) {
  test::expect_finetune_matches_transformers(kFixtures / "finetune_llama");
}

// On a machine with transformers: fresh folders of every case, the same checks.
TEST(TransformersParity, FreshImportFolders) {
  if (!test::have_transformers())
    GTEST_SKIP() << "skipped: " << test::torch_python() << " has no transformers";
  test::TempDir tmp("transformers_fresh");
  ASSERT_TRUE(test::run_transformers_oracle("import " + tmp.path().string()));
  for (const auto& dir : folders(tmp.path())) {
    test::expect_import_matches_transformers(dir);
    test::record_transformers_fixture(dir, dir.filename().string());
  }
}

TEST(TransformersParity, FreshFineTune) {
  if (!test::have_transformers())
    GTEST_SKIP() << "skipped: " << test::torch_python() << " has no transformers";
  test::TempDir tmp("transformers_fresh_finetune");
  ASSERT_TRUE(test::run_transformers_oracle("finetune " + tmp.path().string()));
  test::expect_finetune_matches_transformers(tmp / "finetune_llama");
  test::record_transformers_fixture(tmp / "finetune_llama", "finetune_llama");
}

}  // namespace
}  // namespace hwt
