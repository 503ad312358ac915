// The analyses read a Hugging Face config.json (or its folder) as --config: the published
// config.json of Llama-3.2-1B and Pythia-410M (their fields as on the Hub) trace the same step as
// the shipped TOML shapes written from them.
#include <gtest/gtest.h>

#include "cli_util.h"

namespace hwt {
namespace {

// meta-llama/Llama-3.2-1B's config.json (the fields hwt reads, and some it ignores).
constexpr const char* kLlama32_1b = R"({
  "architectures": ["LlamaForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
  "bos_token_id": 128000, "eos_token_id": 128001, "head_dim": 64, "hidden_act": "silu",
  "hidden_size": 2048, "initializer_range": 0.02, "intermediate_size": 8192,
  "max_position_embeddings": 131072, "mlp_bias": false, "model_type": "llama",
  "num_attention_heads": 32, "num_hidden_layers": 16, "num_key_value_heads": 8,
  "pretraining_tp": 1, "rms_norm_eps": 1e-05,
  "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                   "original_max_position_embeddings": 8192, "rope_type": "llama3"},
  "rope_theta": 500000.0, "tie_word_embeddings": true, "torch_dtype": "bfloat16",
  "use_cache": true, "vocab_size": 128256})";

// EleutherAI/pythia-410m's config.json.
constexpr const char* kPythia410m = R"({
  "architectures": ["GPTNeoXForCausalLM"], "bos_token_id": 0, "eos_token_id": 0,
  "hidden_act": "gelu", "hidden_size": 1024, "initializer_range": 0.02,
  "intermediate_size": 4096, "layer_norm_eps": 1e-05, "max_position_embeddings": 2048,
  "model_type": "gpt_neox", "num_attention_heads": 16, "num_hidden_layers": 24,
  "rotary_emb_base": 10000, "rotary_pct": 0.25, "tie_word_embeddings": false,
  "torch_dtype": "float16", "use_cache": true, "use_parallel_residual": true,
  "vocab_size": 50304})";

TEST(HfConfigAsConfig, FlopsMatchTheShippedShapes) {
  test::TempDir tmp("interop_config");
  std::filesystem::create_directories(tmp.path() / "llama");
  tmp.write("llama/config.json", kLlama32_1b);
  tmp.write("pythia.json", kPythia410m);
  const std::string step = " --seq 128 --batch 1";
  for (const auto& [toml, hf] :
       {std::pair{"llama3.2_1b", tmp / "llama"}, std::pair{"pythia_410m", tmp / "pythia.json"}}) {
    // The shipped shapes train in bf16; Pythia's weights are float16, which hwt reads as fp16.
    const test::CliResult want = test::run_hwt(std::string("flops --config ") + toml + step, tmp);
    const test::CliResult got =
        test::run_hwt("flops --config " + hf + step + " --set train.precision=bf16", tmp);
    ASSERT_EQ(want.exit_code, 0) << want.err;
    ASSERT_EQ(got.exit_code, 0) << got.err;
    EXPECT_EQ(got.out, want.out) << toml;
  }
  // An unsupported value is one line and exit code 2, as for any bad config.
  tmp.write(
      "bad.json",
      R"({"architectures": ["LlamaForCausalLM"], "rope_scaling": {"type": "dynamic", "factor": 2.0}})");
  const test::CliResult bad = test::run_hwt("flops --config " + (tmp / "bad.json"), tmp);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("rope scaling type 'dynamic' is not supported"), std::string::npos)
      << bad.err;
}

// Issue 35's one vocabulary: hwt config and hwt train read --config as every analysis does.
TEST(HfConfigAsConfig, ConfigAndTrainTakeAModelFolderToo) {
  test::TempDir tmp("interop_config_train");
  std::filesystem::create_directories(tmp.path() / "pythia");
  tmp.write("pythia/config.json", kPythia410m);
  const test::CliResult shown = test::run_hwt("config --config " + tmp / "pythia", tmp);
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_NE(shown.out.find("hidden = 1024"), std::string::npos) << shown.out;
  EXPECT_NE(shown.out.find("layers = 24"), std::string::npos) << shown.out;
  // Trains that shape (shrunk by --set to run here) on the default data, from random weights.
  tmp.write("train.tsv", test::tiny_sentiment_tsv(40, 2));
  const test::CliResult trained = test::run_hwt(
      "train --config " + tmp / "pythia" + " --out " + tmp / "run" +
          " --set model.layers=1 --set model.hidden=32 --set model.heads=4 --set model.ffn=64 "
          "--set model.vocab_size=0 --set model.head=classify --set data.format=tsv "
          "--set data.path=" +
          tmp / "train.tsv" +
          " --set data.max_len=16 --set model.max_seq=16 --set train.max_steps=2 "
          "--set train.batch_size=4 --set train.threads=1 --set train.precision=fp32 --quiet",
      tmp);
  EXPECT_EQ(trained.exit_code, 0) << trained.err;
}

}  // namespace
}  // namespace hwt
