// Bad Hugging Face folders and unexportable checkpoints through the hwt binary: one line on
// stderr naming the problem, exit code 2, and nothing written.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>

#include "cli_util.h"
#include "core/safetensors.h"
#include "interop/hf_export.h"
#include "interop_test_util.h"

namespace hwt {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

ModelConfig tiny_llama() {
  ModelConfig m;
  m.head = Task::Lm;
  m.causal = true;
  m.vocab_size = 40;
  m.max_seq = 16;
  m.hidden = 16;
  m.heads = 2;
  m.ffn = 24;
  m.layers = 1;
  m.norm_kind = NormKind::RmsNorm;
  m.position = Position::Rope;
  m.activation = Activation::SwiGlu;
  m.bias = false;
  m.dropout = 0;
  m.tie_embeddings = false;
  return m;
}

class InteropErrors : public ::testing::Test {
 protected:
  InteropErrors() : tmp_("interop_errors") {
    test::write_random_checkpoint(tmp_ / "m.safetensors", tiny_llama());
    export_hf_model(tmp_ / "m.safetensors", tmp_ / "good");
  }
  // A copy of the exported folder to spoil.
  std::string copy(const std::string& name) {
    fs::copy(tmp_.path() / "good", tmp_.path() / name, fs::copy_options::recursive);
    return tmp_ / name;
  }
  json config(const std::string& dir) { return json::parse(test::slurp(dir + "/config.json")); }
  void write_config(const std::string& dir, const json& j) {
    std::ofstream(dir + "/config.json") << j.dump(2);
  }
  // Rewrites dir/model.safetensors with `edit` applied to its tensors.
  template <class F>
  void edit_weights(const std::string& dir, F edit) {
    const SafetensorsFile f = SafetensorsFile::open(dir + "/model.safetensors");
    std::vector<SafetensorsEntry> entries;
    for (const std::string& n : f.names()) {
      const auto v = f.get(n);
      entries.push_back({n, v.dtype, v.shape, v.data});
    }
    edit(entries);
    write_safetensors(dir + "/model.safetensors.new", entries, f.metadata());
    fs::rename(dir + "/model.safetensors.new", dir + "/model.safetensors");
  }
  // `hwt import dir` fails with one line holding `what`, exit 2, no checkpoint.
  void expect_refused(const std::string& dir, const std::string& what) {
    const std::string out = tmp_ / "out.safetensors";
    const test::CliResult r = test::run_hwt("import " + dir + " --out " + out, tmp_);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(what), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(fs::exists(out));
  }

  test::TempDir tmp_;
  std::vector<float> extra_ = std::vector<float>(16, 1.0f);
};

TEST_F(InteropErrors, TheGoodFolderImports) {
  const test::CliResult r =
      test::run_hwt("import " + (tmp_ / "good") + " --out " + (tmp_ / "ok.safetensors"), tmp_);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("imported LlamaForCausalLM"), std::string::npos) << r.out;
}

TEST_F(InteropErrors, MissingTensor) {
  const std::string dir = copy("missing");
  edit_weights(dir, [](auto& e) {
    std::erase_if(e, [](const SafetensorsEntry& t) {
      return t.name == "model.layers.0.self_attn.k_proj.weight";
    });
  });
  expect_refused(dir, "tensor 'model.layers.0.self_attn.k_proj.weight' missing");
}

TEST_F(InteropErrors, ExtraTensor) {
  const std::string dir = copy("extra");
  edit_weights(dir, [&](auto& e) {
    e.push_back({"model.layers.0.self_attn.rope_gate", DType::F32, {16}, extra_.data()});
  });
  expect_refused(dir, "unexpected tensor 'model.layers.0.self_attn.rope_gate'");
}

TEST_F(InteropErrors, ShapeDisagreesWithConfig) {
  const std::string dir = copy("shape");
  json c = config(dir);
  c["intermediate_size"] = 32;
  write_config(dir, c);
  expect_refused(dir,
                 "'model.layers.0.mlp.gate_proj.weight' in model.safetensors is [24, 16]; "
                 "config.json gives [32, 16]");
}

TEST_F(InteropErrors, UnsupportedArchitecture) {
  const std::string dir = copy("arch");
  json c = config(dir);
  c["architectures"] = {"T5ForConditionalGeneration"};
  write_config(dir, c);
  expect_refused(dir, "architecture 'T5ForConditionalGeneration' is not supported");
}

TEST_F(InteropErrors, UnknownRopeScaling) {
  const std::string dir = copy("yarn");
  json c = config(dir);
  c["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4.0}};
  write_config(dir, c);
  expect_refused(dir, "rope scaling type 'yarn' is not supported");
}

TEST_F(InteropErrors, UnsupportedFieldValue) {
  const std::string dir = copy("bias");
  json c = config(dir);
  c["mlp_bias"] = true;  // with attention_bias false: hwt's one bias flag cannot say it
  write_config(dir, c);
  expect_refused(dir, "mlp_bias=true");
}

TEST_F(InteropErrors, NoWeights) {
  const std::string dir = copy("empty");
  fs::remove(dir + "/model.safetensors");
  expect_refused(dir, "no model.safetensors or model.safetensors.index.json");
}

// A sequence classifier reads BERT's pooler, which hwt lacks: refused, and no folder appears.
TEST_F(InteropErrors, ExportRefusesAModelNoArchitectureHolds) {
  ModelConfig m;
  m.head = Task::Classify;
  m.norm = NormPlacement::Post;
  m.vocab_size = 30;
  m.max_seq = 16;
  m.hidden = 16;
  m.heads = 2;
  m.ffn = 24;
  m.layers = 1;
  m.num_labels = 3;
  test::write_random_checkpoint(tmp_ / "cls.safetensors", m);
  const std::string out = tmp_ / "cls_hf";
  const test::CliResult r =
      test::run_hwt("export " + (tmp_ / "cls.safetensors") + " --format hf --out " + out, tmp_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("pooler"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(InteropErrors, ExportRefusesAFolderInUse) {
  const test::CliResult r = test::run_hwt(
      "export " + (tmp_ / "m.safetensors") + " --format hf --out " + (tmp_ / "good"), tmp_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("exists and is not an empty folder"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace hwt
