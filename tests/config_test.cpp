// The config system: defaults, TOML round trip, overrides, validation, and docs/config.md
// staying equal to the generated key reference.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "cli_util.h"
#include "config/run_config.h"

namespace hwt {
namespace {

TEST(Config, DocsMatchTheKeyReference) {
  const std::string docs = test::slurp(std::string(HWT_SOURCE_DIR) + "/docs/config.md");
  EXPECT_EQ(docs, config_reference_markdown()) << "docs/config.md is stale: regenerate it with "
                                                  "`build/hwt config --reference > docs/config.md`";
}

TEST(Config, TomlAndJsonRoundTrip) {
  test::TempDir dir("config_roundtrip");
  RunConfig c = load_run_config(
      "", {"model.hidden=96", "model.heads=3", "optim.name=adan", "optim.adan.beta2=0.9",
           "data.path=some/where.tsv", "train.time_limit=1.5", "model.causal=true"});
  dir.write("c.toml", to_toml(c));
  const RunConfig back = load_run_config(dir / "c.toml", {});
  EXPECT_EQ(to_json(back), to_json(c));
  EXPECT_EQ(to_json(run_config_from_json(to_json(c))), to_json(c));
  EXPECT_EQ(back.model.hidden, 96);
  EXPECT_EQ(back.optim.name, OptimizerKind::Adan);
  EXPECT_DOUBLE_EQ(back.optim.adan_beta2, 0.9);
}

// Every value exactly as it was: tensor-train lists, floats of 17 digits and infinity, strings
// that need escapes, UTF-8.
TEST(Config, TomlRoundTripKeepsEveryValue) {
  test::TempDir dir("config_roundtrip_values");
  const RunConfig c = load_run_config(
      "tt_atis", {"optim.lr=0.00012345678901234567", "model.dropout=0.1", "train.time_limit=inf",
                  "data.path=dir with \"quotes\"\\back\tslash/donn\u00e9es.tsv"});
  const std::string toml = to_toml(c);
  dir.write("c.toml", toml);
  const RunConfig back = load_run_config(dir / "c.toml", {});
  EXPECT_EQ(to_json(back), to_json(c)) << toml;
  EXPECT_FALSE(back.model.tt.embedding.in.empty());
  EXPECT_EQ(back.data.path, c.data.path);
  EXPECT_EQ(back.optim.lr, c.optim.lr);
}

TEST(Config, EveryKeyIsDocumentedAndUnique) {
  std::set<std::string> names;
  for (const auto& k : run_config_keys()) {
    EXPECT_FALSE(k.doc.empty()) << k.name;
    EXPECT_TRUE(names.insert(k.name).second) << k.name;
  }
}

TEST(Config, ValidationNamesTheKey) {
  auto message = [](std::vector<std::string> sets) {
    try {
      load_run_config("", sets);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({"model.heads=5"}).find("model.heads=5 does not divide model.hidden"),
            std::string::npos);
  EXPECT_NE(message({"optim.lr=0"}).find("optim.lr"), std::string::npos);
  EXPECT_NE(message({"model.dropout=1.5"}).find("model.dropout"), std::string::npos);
  EXPECT_NE(message({"data.max_len=4096"}).find("model.max_seq"), std::string::npos);
  EXPECT_NE(message({"model.head=lm"}).find("model.causal"), std::string::npos);
  EXPECT_NE(message({"train.batch_size=0"}).find("train.batch_size"), std::string::npos);
  EXPECT_NE(message({"model.ffn_multiple=0"}).find("config model.ffn_multiple=0 must be positive"),
            std::string::npos);
  EXPECT_NE(message({"model.ffn_multiple=-8"}).find("model.ffn_multiple=-8 must be positive"),
            std::string::npos);
  EXPECT_NE(
      message({"model.hidden_multiple=0"}).find("config model.hidden_multiple=0 must be positive"),
      std::string::npos);
  EXPECT_NE(message({"nosection"}).find("key=value"), std::string::npos);
  EXPECT_EQ(message({"model.hidden=512", "model.heads=8"}), "no error");
}

TEST(Config, CudaGraphIsABoolOffByDefault) {
  EXPECT_FALSE(RunConfig{}.train.cuda_graph);
  EXPECT_TRUE(load_run_config("", {"train.cuda_graph=true"}).train.cuda_graph);
  EXPECT_FALSE(load_run_config("", {"train.cuda_graph=false"}).train.cuda_graph);
  try {
    load_run_config("", {"train.cuda_graph=sometimes"});
    ADD_FAILURE() << "train.cuda_graph=sometimes was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("train.cuda_graph"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace hwt
