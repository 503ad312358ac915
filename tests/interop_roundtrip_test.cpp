// hwt -> Hugging Face -> hwt: a tiny random model of each architecture `hwt export` writes,
// exported and imported back, must come back with bit-identical weights, the same model config
// and the same logits; the folder holds what transformers' from_pretrained reads. Where
// transformers is installed (the GPU machine), it loads each folder and must give hwt's logits.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstring>
#include <filesystem>

#include "cli_util.h"
#include "config/run_config.h"
#include "core/bf16.h"
#include "core/error.h"
#include "core/fp16.h"
#include "core/safetensors.h"
#include "interop/hf_export.h"
#include "interop/hf_import.h"
#include "interop_test_util.h"
#include "transformers_parity.h"

namespace hwt {
namespace {

using nlohmann::json;

ModelConfig decoder() {
  ModelConfig m;
  m.head = Task::Lm;
  m.causal = true;
  m.norm = NormPlacement::Pre;
  m.vocab_size = 67;  // not a multiple of 64: the stored vocabulary is padded
  m.layers = 2;
  m.max_seq = 16;
  return m;
}

// GPT-2: hidden 20 of 4 heads pads the residual, each head and the FFN (36 -> 40).
ModelConfig gpt2(bool tied) {
  ModelConfig m = decoder();
  m.hidden = 20;
  m.heads = 4;
  m.ffn = 36;
  m.activation = tied ? Activation::GeluTanh : Activation::Relu;
  m.tie_embeddings = tied;
  return m;
}

ModelConfig llama_like() {
  ModelConfig m = decoder();
  m.max_seq = 64;
  m.hidden = 32;
  m.heads = 4;
  m.kv_heads = 2;
  m.ffn = 44;
  m.norm_kind = NormKind::RmsNorm;
  m.position = Position::Rope;
  m.rope.theta = 5000;
  m.activation = Activation::SwiGlu;
  m.bias = false;
  m.dropout = 0;  // Llama's family has no dropout on the residual stream
  m.attn_dropout = 0;
  m.ln_eps = 1e-6;
  m.tie_embeddings = false;
  return m;
}

ModelConfig llama3_scaled() {
  ModelConfig m = llama_like();
  m.rope.scaling_factor = 8;
  m.rope.original_max_seq = 16;
  return m;
}

ModelConfig llama_biased() {
  ModelConfig m = llama_like();
  m.bias = true;
  m.activation = Activation::GeGlu;
  m.tie_embeddings = true;
  return m;
}

ModelConfig qwen2() {
  ModelConfig m = llama_like();
  m.qkv_bias = true;
  m.kv_heads = 1;
  m.tie_embeddings = true;
  return m;
}

ModelConfig neox(bool parallel) {
  ModelConfig m = decoder();
  m.max_seq = 32;
  m.hidden = 32;
  m.heads = 4;
  m.ffn = 64;
  m.position = Position::Rope;
  m.rope.fraction = parallel ? 0.25 : 1.0;
  m.parallel_residual = parallel;
  m.activation = Activation::Gelu;
  m.dropout = 0;
  m.attn_dropout = 0;
  m.tie_embeddings = !parallel;
  return m;
}

ModelConfig bert_tagger() {
  ModelConfig m;
  m.head = Task::Tokens;
  m.causal = false;
  m.norm = NormPlacement::Post;
  m.vocab_size = 50;
  m.max_seq = 20;
  m.hidden = 24;
  m.heads = 4;
  m.ffn = 36;
  m.layers = 2;
  m.ln_eps = 1e-12;
  m.num_token_labels = 5;
  return m;
}

json model_keys(const ModelConfig& m) {
  RunConfig c;
  c.model = m;
  const json all = to_json(c);
  json out;
  for (auto it = all.begin(); it != all.end(); ++it)
    if (it.key().rfind("model.", 0) == 0) out[it.key()] = it.value();
  return out;
}

// transformers loads the exported folder `hf`: hwt's logits of `ckpt`, nothing missing or
// unexpected (tests/transformers_parity.h); recorded as fixture `export_NAME` when asked.
void check_in_transformers(const std::filesystem::path& hf, const std::string& ckpt,
                           const std::string& name) {
  if (!test::have_transformers()) return;
  ASSERT_TRUE(test::run_transformers_oracle("export " + hf.string()));
  std::filesystem::copy_file(ckpt, hf / "hwt.safetensors");
  test::expect_export_matches_transformers(hf);
  test::record_transformers_fixture(hf, "export_" + name);
}

std::vector<int32_t> some_ids(const ModelConfig& m, size_t n) {
  std::vector<int32_t> ids;
  for (size_t i = 0; i < n; ++i) ids.push_back(static_cast<int32_t>((i * 7 + 3) % m.vocab_size));
  return ids;
}

struct Case {
  const char* name;
  ModelConfig model;
  const char* architecture;
};

class RoundTrip : public ::testing::TestWithParam<Case> {};

TEST_P(RoundTrip, WeightsConfigAndLogitsComeBack) {
  const Case& c = GetParam();
  test::TempDir tmp(std::string("interop_rt_") + c.name);
  const std::vector<std::string> tags = {"O", "B-x", "I-x", "B-y", "I-y"};
  test::write_random_checkpoint(tmp / "a.safetensors", c.model,
                                c.model.head == Task::Tokens ? tags : std::vector<std::string>{});
  // A small shard limit splits the Llama-like model into an indexed set of files.
  const bool sharded = std::string(c.name) == "llama3";
  const ExportReport e =
      export_hf_model(tmp / "a.safetensors", tmp / "hf", sharded ? 8192 : kDefaultShardBytes);
  EXPECT_EQ(e.architecture, c.architecture);
  EXPECT_EQ(e.shards > 1, sharded);
  EXPECT_EQ(std::filesystem::exists(tmp / "hf/model.safetensors.index.json"), sharded);
  const json config = json::parse(test::slurp(tmp / "hf/config.json"));
  EXPECT_EQ(config["architectures"], json::array({c.architecture}));
  EXPECT_EQ(config["torch_dtype"], "float32");
  EXPECT_TRUE(config.contains("model_type"));
  if (c.model.head == Task::Tokens) {
    EXPECT_EQ(config["id2label"]["1"], "B-x");
  }

  const ImportReport r = import_hf_model(tmp / "hf", tmp / "b.safetensors");
  EXPECT_EQ(r.architecture, c.architecture);

  const Checkpoint a(tmp / "a.safetensors"), b(tmp / "b.safetensors");
  EXPECT_EQ(model_keys(b.info().config.model), model_keys(a.info().config.model));
  EXPECT_EQ(b.info().vocab["token_labels"], a.info().vocab["token_labels"]);
  const SafetensorsFile &ta = a.tensors(), &tb = b.tensors();
  ASSERT_EQ(tb.names(), ta.names());
  for (const std::string& name : ta.names()) {
    const auto va = ta.get(name), vb = tb.get(name);
    ASSERT_EQ(vb.shape, va.shape) << name;
    EXPECT_EQ(std::memcmp(va.data, vb.data, va.bytes), 0) << name << " differs";
  }
  const std::vector<int32_t> ids = some_ids(c.model, 9);
  EXPECT_EQ(test::checkpoint_logits(tmp / "b.safetensors", ids),
            test::checkpoint_logits(tmp / "a.safetensors", ids));
  check_in_transformers(tmp / "hf", tmp / "a.safetensors", c.name);
}

INSTANTIATE_TEST_SUITE_P(
    Architectures, RoundTrip,
    ::testing::Values(Case{"gpt2_tied", gpt2(true), "GPT2LMHeadModel"},
                      Case{"gpt2_untied", gpt2(false), "GPT2LMHeadModel"},
                      Case{"llama", llama_like(), "LlamaForCausalLM"},
                      Case{"llama3", llama3_scaled(), "LlamaForCausalLM"},
                      Case{"llama_biased", llama_biased(), "LlamaForCausalLM"},
                      Case{"qwen2", qwen2(), "Qwen2ForCausalLM"},
                      Case{"neox_parallel", neox(true), "GPTNeoXForCausalLM"},
                      Case{"neox_sequential", neox(false), "GPTNeoXForCausalLM"},
                      Case{"bert_tagger", bert_tagger(), "BertForTokenClassification"}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

// transformers does not store a tied LM head; an untied one it does, under lm_head.weight.
TEST(HfExport, StoresTheLmHeadOnlyWhenUntied) {
  test::TempDir tmp("interop_tied");
  for (const bool tied : {true, false}) {
    const std::string ckpt = tmp / "m.safetensors", dir = tmp / (tied ? "tied" : "untied");
    test::write_random_checkpoint(ckpt, gpt2(tied));
    export_hf_model(ckpt, dir);
    const SafetensorsFile f = SafetensorsFile::open(dir + "/model.safetensors");
    EXPECT_EQ(f.contains("lm_head.weight"), !tied);
    EXPECT_TRUE(f.contains("transformer.h.1.attn.c_attn.weight"));
    // Conv1D: [in, out]
    EXPECT_EQ(f.get("transformer.h.0.mlp.c_fc.weight").shape, (std::vector<int64_t>{20, 36}));
    EXPECT_EQ(f.metadata().at("format"), "pt");
  }
}

// --precision bf16 and fp16: half the bytes, torch_dtype saying which, and each weight the
// rounding (to nearest even) of hwt's, which an import reads back exactly; transformers loads
// the folder and gives the logits of the rounded weights.
class SixteenBitExport : public ::testing::TestWithParam<DType> {};

TEST_P(SixteenBitExport, StoresEachWeightRoundedToNearestEven) {
  const DType dtype = GetParam();
  const bool bf16 = dtype == DType::BF16;
  const auto rounded = [bf16](float x) {
    return bf16 ? bf16_to_float(float_to_bf16(x)) : f16_to_float(float_to_f16(x));
  };
  test::TempDir tmp("interop_" + std::string(dtype_name(dtype)));
  test::write_random_checkpoint(tmp / "a.safetensors", llama_like());
  const ExportReport f32 = export_hf_model(tmp / "a.safetensors", tmp / "f32");
  const ExportReport half =
      export_hf_model(tmp / "a.safetensors", tmp / "half", kDefaultShardBytes, nullptr, dtype);
  EXPECT_EQ(2 * half.bytes, f32.bytes);
  EXPECT_EQ(json::parse(test::slurp(tmp / "half/config.json"))["torch_dtype"],
            bf16 ? "bfloat16" : "float16");
  EXPECT_EQ(SafetensorsFile::open(tmp / "half/model.safetensors").get("lm_head.weight").dtype,
            dtype);
  import_hf_model(tmp / "half", tmp / "b.safetensors");
  const Checkpoint a(tmp / "a.safetensors"), b(tmp / "b.safetensors");
  for (const std::string& name : a.tensors().names()) {
    const auto va = a.tensors().get(name), vb = b.tensors().get(name);
    ASSERT_EQ(va.bytes, vb.bytes) << name;
    const auto* x = static_cast<const float*>(va.data);
    const auto* y = static_cast<const float*>(vb.data);
    for (size_t i = 0; i < va.bytes / 4; ++i)
      ASSERT_EQ(y[i], rounded(x[i])) << name << " element " << i;
  }
  check_in_transformers(tmp / "half", tmp / "b.safetensors",
                        std::string("llama_") + (bf16 ? "bf16" : "fp16"));
}

INSTANTIATE_TEST_SUITE_P(Precisions, SixteenBitExport, ::testing::Values(DType::BF16, DType::F16),
                         [](const auto& p) { return std::string(dtype_name(p.param)); });

// A weight past fp16's range would load as infinity: the export names it and writes nothing.
TEST(HfExport, Fp16RefusesAWeightPastItsRange) {
  test::TempDir tmp("interop_f16_range");
  test::write_random_checkpoint(tmp / "a.safetensors", llama_like(), {},
                                [](const ParamInfo& p, std::vector<float>& values) {
                                  if (p.name == "final_ln.weight") values[3] = 7e4f;
                                });
  try {
    export_hf_model(tmp / "a.safetensors", tmp / "half", kDefaultShardBytes, nullptr, DType::F16);
    ADD_FAILURE() << "exported";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'model.norm.weight'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("65504"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(tmp / "half"));
  EXPECT_TRUE(std::filesystem::is_empty(tmp.path()) ||
              std::distance(std::filesystem::directory_iterator(tmp.path()),
                            std::filesystem::directory_iterator{}) == 1)
      << "only the checkpoint remains";
}

// A checkpoint `hwt train` wrote (its vocabulary size left to the tokenizer, optimizer state
// beside the weights) through the commands: exported, imported, the same weights.
TEST(HfExport, ATrainedCheckpointGoesThroughTheCommands) {
  test::TempDir tmp("interop_trained");
  const test::CliResult trained = test::run_hwt(
      "train --config " + std::string(HWT_TEST_DIR) +
          "/../configs/shakespeare_char_cpu.toml --set train.max_steps=2 --set model.layers=1 "
          "--set model.hidden=32 --set model.heads=2 --set model.ffn=64 --quiet --out " +
          (tmp / "run"),
      tmp);
  ASSERT_EQ(trained.exit_code, 0) << trained.err;
  const std::string ckpt = tmp / "run/checkpoint.safetensors";
  const test::CliResult exported =
      test::run_hwt("export " + ckpt + " --format hf --out " + (tmp / "hf"), tmp);
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_NE(exported.out.find("exported GPT2LMHeadModel"), std::string::npos) << exported.out;
  const test::CliResult imported =
      test::run_hwt("import " + (tmp / "hf") + " --out " + (tmp / "back.safetensors"), tmp);
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  const SafetensorsFile a = SafetensorsFile::open(ckpt),
                        b = SafetensorsFile::open(tmp / "back.safetensors");
  for (const std::string& name : b.names()) {
    ASSERT_TRUE(a.contains(name)) << name;
    const auto va = a.get(name), vb = b.get(name);
    ASSERT_EQ(vb.shape, va.shape) << name;
    EXPECT_EQ(std::memcmp(va.data, vb.data, va.bytes), 0) << name << " differs";
  }
  EXPECT_EQ(b.names().size(), 4u + 12u) << "embeddings, final norm and one block's 12 tensors";
  check_in_transformers(tmp / "hf", ckpt, "gpt2_trained");
}

}  // namespace
}  // namespace hwt
