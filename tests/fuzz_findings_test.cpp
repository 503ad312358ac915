// Regression tests of what the fuzz targets (tests/fuzz, scripts/fuzz.sh) found: each input that
// once crashed, hung or failed with an internal error now gets its InputError (or its result).
#include <gtest/gtest.h>

#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "accel/design_space.h"
#include "analysis/gemm_calibration.h"
#include "cli_util.h"
#include "codesign/model_space.h"
#include "config/run_config.h"
#include "core/safetensors.h"
#include "data/gpt2_vocabulary.h"
#include "data/hf_tokenizer.h"
#include "train/checkpoint.h"

namespace hwt {
namespace {

// The message of the InputError that `f` throws, or "no error".
template <class F>
std::string input_error(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

// config_set_fuzz: a --set value that is not UTF-8 ended in nlohmann's type_error (an internal
// error) when the message or run.json wrote it as JSON.
TEST(FuzzFindings, SetValueThatIsNotUtf8IsAnInputError) {
  for (const std::string set : {"data.format=cs\x8e\xf5", "data.path=caf\xe9.tsv"}) {
    const std::string message = input_error([&] { (void)load_run_config("", {set}); });
    EXPECT_NE(message.find("is not valid UTF-8"), std::string::npos) << message;
    EXPECT_NE(message.find(set.substr(0, set.find('='))), std::string::npos) << message;
  }
  EXPECT_EQ(input_error([] { (void)load_run_config("", {"data.path=café.tsv"}); }), "no error");
}

// gpt2_vocabulary_fuzz: an id in encoder.json too large for int64 (a JSON float) was converted
// with undefined behaviour (UBSan: "outside the range of representable values").
TEST(FuzzFindings, Gpt2EncoderIdThatIsNotAnIntegerIsAnInputError) {
  for (const std::string id : {"2.7e70", "1.5", "\"7\""}) {
    const std::string message =
        input_error([&] { (void)parse_gpt2_vocabulary("{\"he\": " + id + "}", "", "fuzz input"); });
    EXPECT_NE(message.find("token 'he' has id "), std::string::npos) << message;
    EXPECT_NE(message.find(", not an integer"), std::string::npos) << message;
  }
}

// A post-processor's token id outside the vocabulary (or a float: undefined behaviour on
// conversion) was taken as it was and later indexed the vocabulary. Found reading
// hf_tokenizer.cpp beside the GPT-2 finding; the tokenizer.json is hf_tokenizer_fuzz's seed.
TEST(FuzzFindings, HfPostProcessorIdOutsideTheVocabularyIsAnInputError) {
  const std::string seed =
      test::slurp(std::string(HWT_TEST_DIR) + "/fuzz/corpus/hf_tokenizer_fuzz/byte_level");
  nlohmann::json j = nlohmann::json::parse(seed.substr(0, seed.find("\n====\n")));
  const test::TempDir dir("fuzz_hf_post");
  for (const char* id : {"1e300", "-1", "260", "0"}) {
    j["post_processor"] = nlohmann::json::parse(
        std::string(R"({"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>"}},
           {"Sequence": {"id": "A"}}], "special_tokens": {"<s>": {"ids": [)") +
        id + "]}}}");
    dir.write("tokenizer.json", j.dump());
    const std::string message =
        input_error([&] { (void)HfTokenizer::load(dir / "tokenizer.json", true); });
    if (std::string(id) == "0") {
      EXPECT_EQ(message, "no error");
    } else {
      EXPECT_NE(message.find("post_processor TemplateProcessing adds id"), std::string::npos)
          << message;
      EXPECT_NE(message.find("not one of the 260 tokens"), std::string::npos) << message;
    }
  }
}

// `text` with its first `from` replaced by `to` (which must be there).
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

// model_space_fuzz: a choice too large for int64 (2e48) was converted with undefined behaviour
// before the check that it is a whole number; the design space read its choices the same way.
TEST(FuzzFindings, SpaceChoicesBeyondInt64AreInputErrors) {
  const test::TempDir dir("fuzz_spaces");
  const std::string source(HWT_SOURCE_DIR);
  dir.write("model.toml", replaced(test::slurp(source + "/configs/codesign_space.toml"),
                                   "layers = [1, 2, 4, 6]", "layers = [1, 2, 2e48]"));
  EXPECT_NE(input_error([&] {
              (void)codesign::load_model_space(dir / "model.toml", RunConfig{});
            }).find("model.layers must list positive integers, got 2e+48"),
            std::string::npos);
  dir.write("design.toml", replaced(test::slurp(source + "/hardware/accel/spaces/acceltran.toml"),
                                    "pes = [64, 128, 256, 512, 1024]", "pes = [64, 1e19]"));
  EXPECT_NE(input_error([&] {
              (void)accel::load_design_space(dir / "design.toml",
                                             accel::default_hardware_library());
            }).find("choices.pes must list positive integers, got 1e+19"),
            std::string::npos);
}

// A checkpoint whose training state holds a float step beyond int64 (undefined behaviour on
// conversion). Found reading checkpoint.cpp beside the space finding; the checkpoint is
// checkpoint_fuzz's seed with its "state" metadata rewritten.
TEST(FuzzFindings, CheckpointStateThatIsNotAnIntegerIsAnInputError) {
  const std::string seed =
      test::slurp(std::string(HWT_TEST_DIR) + "/fuzz/corpus/checkpoint_fuzz/tiny.safetensors");
  uint64_t header_bytes = 0;
  std::memcpy(&header_bytes, seed.data(), 8);  // little-endian, as the machines hwt runs on
  nlohmann::json header = nlohmann::json::parse(seed.substr(8, header_bytes));
  header["__metadata__"]["state"] =
      R"({"best_score":null,"epoch":0,"evals_since_best":0,"position":1,"step":1e300})";
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  const uint64_t n = text.size();
  const test::TempDir dir("fuzz_state");
  dir.write("ck.safetensors", std::string(reinterpret_cast<const char*>(&n), 8) + text +
                                  seed.substr(8 + header_bytes));
  const std::string message = input_error([&] { Checkpoint ck(dir / "ck.safetensors"); });
  EXPECT_NE(message.find("training state 'step' is 1e+300, not an integer"), std::string::npos)
      << message;
}

// calibration_fuzz (2026-12-05, after 330,000 inputs): a shipped calibration with "device": 167
// ended in nlohmann's type_error (an internal error); so did the other optional keys of a
// wrong type. Each is now one error naming the key.
TEST(FuzzFindings, CalibrationKeysOfTheWrongTypeAreInputErrors) {
  const nlohmann::json shipped = nlohmann::json::parse(
      test::slurp(std::string(HWT_TEST_DIR) + "/../hardware/calibration/gemm_h200_bf16.json"));
  const test::TempDir dir("fuzz_calibration");
  const auto message = [&](const std::string& key, const nlohmann::json& value, bool quality) {
    nlohmann::json j = shipped;
    (quality ? j["quality"][key] : j[key]) = value;
    dir.write("c.json", j.dump());
    return input_error([&] { (void)load_calibration(dir / "c.json"); });
  };
  EXPECT_EQ(input_error([&] {
              dir.write("c.json", shipped.dump());
              (void)load_calibration(dir / "c.json");
            }),
            "no error");
  EXPECT_NE(message("device", 167, false).find("key 'device' must be a string"), std::string::npos);
  EXPECT_NE(message("precision", 16, false).find("key 'precision' must be a string"),
            std::string::npos);
  EXPECT_NE(message("samples", -3, false).find("key 'samples' must be a whole number"),
            std::string::npos);
  EXPECT_NE(message("samples", 1e300, false).find("key 'samples' must be a whole number"),
            std::string::npos);
  EXPECT_NE(message("count", "many", true).find("key 'count' must be a whole number"),
            std::string::npos);
  EXPECT_NE(message("spearman", "high", true).find("key 'spearman' must be a number"),
            std::string::npos);
}

}  // namespace
}  // namespace hwt
