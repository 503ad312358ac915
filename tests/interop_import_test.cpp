// Hugging Face folders written the way transformers writes them (tests/oracle/hf_folders.py:
// its tensor names, config.json fields and layouts, F32/BF16/F16, sharded and not), imported:
// hwt's logits must equal the ones the script computes in float64 from transformers'
// definitions of each architecture (GPT-2's Conv1D, GPT-NeoX's per-head fused q|k|v and
// partial rotary, Llama's rotate_half and grouped K/V, Qwen2's q/k/v biases, BERT's token types).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "cli_util.h"
#include "core/safetensors.h"
#include "interop/hf_import.h"
#include "interop_test_util.h"

namespace hwt {
namespace {

using nlohmann::json;

class HfFolder : public ::testing::TestWithParam<const char*> {};

TEST_P(HfFolder, LogitsMatchTheArchitecturesDefinition) {
  if (!test::have_torch()) GTEST_SKIP() << "skipped: " << test::torch_python() << " has no torch";
  const std::filesystem::path dir = test::hf_folders() / GetParam();
  test::TempDir tmp(std::string("interop_import_") + GetParam());
  import_hf_model(dir.string(), tmp / "m.safetensors");
  const json expected = json::parse(test::slurp(dir / "expected.json"));
  const std::vector<float> got =
      test::checkpoint_logits(tmp / "m.safetensors", expected["ids"].get<std::vector<int32_t>>());
  const std::vector<double> want = expected["logits"].get<std::vector<double>>();
  ASSERT_EQ(got.size(), want.size());
  double worst = 0, scale = 1;
  for (size_t i = 0; i < want.size(); ++i) {
    worst = std::max(worst, std::abs(got[i] - want[i]));
    scale = std::max(scale, std::abs(want[i]));
  }
  // fp32 against float64 through two small layers: rounding is ~1e-6 of the logits' scale; a
  // wrong mapping (a transposed or permuted matrix, a missing bias) moves them by O(scale).
  EXPECT_LT(worst, 1e-4 * scale) << GetParam() << ": logits up to " << scale;
}

INSTANTIATE_TEST_SUITE_P(Architectures, HfFolder,
                         ::testing::Values("gpt2", "gpt2_base_names", "llama", "mistral", "qwen2",
                                           "gpt_neox", "bert_tokens"));

// BERT with heads hwt has no equivalent for: the encoder imports (positions plus token type 0),
// the pooler and classifier are left out and the classifier starts fresh, as the notes say.
TEST(HfImport, BertWithoutAnEquivalentHeadKeepsTheEncoder) {
  if (!test::have_torch()) GTEST_SKIP() << "skipped: " << test::torch_python() << " has no torch";
  for (const char* name : {"bert_sequence", "bert_model"}) {
    test::TempDir tmp(std::string("interop_bert_") + name);
    const std::filesystem::path dir = test::hf_folders() / name;
    const ImportReport r = import_hf_model(dir.string(), tmp / "m.safetensors");
    std::string notes;
    for (const std::string& n : r.notes) notes += n + "\n";
    EXPECT_NE(notes.find("pooler.*"), std::string::npos) << notes;
    EXPECT_NE(notes.find("head.classifier.weight"), std::string::npos) << notes;
    const Checkpoint ckpt(tmp / "m.safetensors");
    EXPECT_EQ(ckpt.info().config.model.head, Task::Classify);
    EXPECT_EQ(ckpt.info().config.model.num_labels, 5);
    EXPECT_EQ(ckpt.info().vocab["labels"][4], "TAG_4");
    // BertModel's file has no "bert." prefix; the sequence classifier's has.
    const std::string b = std::string(name) == "bert_model" ? "" : "bert.";
    const SafetensorsFile hf = SafetensorsFile::open((dir / "model.safetensors").string());
    const auto pos = hf.get(b + "embeddings.position_embeddings.weight");
    const auto types = hf.get(b + "embeddings.token_type_embeddings.weight");
    const auto ours = ckpt.tensors().get("embed.positions");
    const auto* p = static_cast<const float*>(pos.data);
    const auto* t = static_cast<const float*>(types.data);
    const auto* o = static_cast<const float*>(ours.data);
    const int64_t width = pos.shape[1];
    for (int64_t i = 0; i < pos.shape[0] * width; ++i)
      ASSERT_EQ(o[i], p[i] + t[i % width]) << "position element " << i;
  }
}

}  // namespace
}  // namespace hwt
