// Loads the real datasets: the fixtures, the shipped ATIS and tiny Shakespeare, and the npm
// dataset when it is installed.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "core/error.h"
#include "data/dataset.h"

namespace hwt {
namespace {

namespace fs = std::filesystem;

const std::string kAtis = HWT_SOURCE_DIR "/data/atis";
const std::string kShakespeare = HWT_SOURCE_DIR "/data/tinyshakespeare/input.txt";
const std::string kFixtures = HWT_TEST_DIR "/fixtures/data";

DataConfig jointbert(const std::string& path, UnseenLabels unseen) {
  DataConfig c;
  c.format = DataFormat::JointBert;
  c.path = path;
  c.min_freq = 1;
  c.unseen_labels = unseen;
  return c;
}

std::map<std::string, int> label_counts(const Dataset& d, const Split& s) {
  std::map<std::string, int> n;
  for (const Example& e : s.examples) ++n[d.labels.name(e.label)];
  return n;
}

TEST(DataReal, MiniJointBertAlignsTagsWithTokens) {
  const std::string path = kFixtures + "/atis_mini";
  EXPECT_THROW(load_dataset(jointbert(path, UnseenLabels::Error), Task::Joint), InputError);
  const Dataset d = load_dataset(jointbert(path, UnseenLabels::Unk), Task::Joint);
  EXPECT_EQ(d.train.size(), 3);
  EXPECT_EQ(d.labels.names(), (std::vector<std::string>{"atis_airfare", "atis_flight", "[UNK]"}));
  const Example& e = d.train.examples[0];  // "i want to fly from boston to denver"
  ASSERT_EQ(e.ids.size(), 9u);
  ASSERT_EQ(e.token_labels.size(), 9u);
  EXPECT_EQ(e.ids[0], Tokenizer::kCls);
  EXPECT_EQ(e.token_labels[0], -1);
  EXPECT_EQ(d.token_labels.name(e.token_labels[6]), "B-fromloc.city_name");
  EXPECT_EQ(d.labels.name(e.label), "atis_flight");
  const Example& unseen = d.test.examples[1];
  EXPECT_EQ(d.labels.name(unseen.label), "[UNK]");
  EXPECT_EQ(d.token_labels.name(unseen.token_labels.back()), "[UNK]");
}

TEST(DataReal, VocabJsonRebuildsTokenizerAndLabels) {
  const Dataset d =
      load_dataset(jointbert(kFixtures + "/atis_mini", UnseenLabels::Unk), Task::Joint);
  const std::string stored = d.vocab_json().dump();
  const Dataset back = dataset_from_vocab_json(nlohmann::json::parse(stored), Task::Joint);
  EXPECT_EQ(back.tokenizer->encode("fly from boston"), d.tokenizer->encode("fly from boston"));
  EXPECT_EQ(back.labels.names(), d.labels.names());
  EXPECT_EQ(back.token_labels.names(), d.token_labels.names());
  EXPECT_EQ(back.train.size(), 0);
}

TEST(DataReal, MaxLenCutsExamples) {
  DataConfig c = jointbert(kFixtures + "/atis_mini", UnseenLabels::Unk);
  c.max_len = 4;
  const Dataset d = load_dataset(c, Task::Joint);
  for (const Split* s : {&d.train, &d.valid, &d.test})
    for (const Example& e : s->examples) {
      EXPECT_LE(e.ids.size(), 4u);
      EXPECT_EQ(e.ids.size(), e.token_labels.size());
    }
}

TEST(DataReal, MiniSpamFolder) {
  DataConfig c;
  c.path = kFixtures + "/spam";
  c.min_freq = 1;
  c.valid_fraction = 0;
  c.test_fraction = 0;
  const Dataset d = load_dataset(c, Task::Classify);
  EXPECT_EQ(d.train.size(), 6);
  EXPECT_EQ(label_counts(d, d.train), (std::map<std::string, int>{{"ham", 4}, {"spam", 2}}));
  std::string all;
  for (const Example& e : d.train.examples) all += d.tokenizer->decode(e.ids) + "\n";
  EXPECT_NE(all.find("you win a prize click here to claim your free prize !"), std::string::npos)
      << all;
  EXPECT_NE(all.find("your order has shipped your order has shipped & will arrive soon ."),
            std::string::npos)
      << all;
  EXPECT_EQ(all.find("color"), std::string::npos) << all;
  EXPECT_EQ(all.find("return"), std::string::npos) << all;  // header dropped
  c.max_examples = 2;
  EXPECT_EQ(load_dataset(c, Task::Classify).train.size(), 2);
}

TEST(DataReal, DataDirOverridesDefaultDataset) {
  const char* old = std::getenv("HWT_DATA_DIR");
  const std::string saved = old != nullptr ? old : "";
  ::setenv("HWT_DATA_DIR", (kFixtures + "/spam").c_str(), 1);
  EXPECT_EQ(default_dataset_path(), kFixtures + "/spam");
  DataConfig c;
  c.valid_fraction = 0;
  c.test_fraction = 0;
  EXPECT_EQ(load_dataset(c, Task::Classify).train.size(), 6);
  if (old != nullptr) {
    ::setenv("HWT_DATA_DIR", saved.c_str(), 1);
  } else {
    ::unsetenv("HWT_DATA_DIR");
  }
}

TEST(DataReal, Atis) {
  const Dataset d = load_dataset(jointbert(kAtis, UnseenLabels::Unk), Task::Joint);
  EXPECT_EQ(d.train.size(), 4478);
  EXPECT_EQ(d.valid.size(), 500);
  EXPECT_EQ(d.test.size(), 893);
  EXPECT_EQ(d.labels.size(), 21 + 1);  // 21 training intents and the unseen label
  try {
    load_dataset(jointbert(kAtis, UnseenLabels::Error), Task::Joint);
    FAIL() << "ATIS dev and test have labels training never saw";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("was not seen in training"), std::string::npos) << msg;
    EXPECT_NE(msg.find(kAtis), std::string::npos) << msg;
    EXPECT_NE(msg.find(" line "), std::string::npos) << msg;
  }
  DataConfig c = jointbert(kAtis, UnseenLabels::Error);
  c.max_examples = 10;
  EXPECT_EQ(load_dataset(c, Task::Classify).train.size(), 10);
}

TEST(DataReal, SpamAssassin) {
  std::string path;
  try {
    path = default_dataset_path();
  } catch (const InputError&) {
    GTEST_SKIP() << "spam-assassin dataset not installed";
  }
  const auto start = std::chrono::steady_clock::now();
  const Dataset d = load_dataset(DataConfig{}, Task::Classify);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << d.source << " loaded in " << seconds << " s\n";
  const int64_t total = d.train.size() + d.valid.size() + d.test.size();
  EXPECT_EQ(total, 6046);
  EXPECT_EQ(d.labels.names(), (std::vector<std::string>{"ham", "spam"}));
  const auto counts = label_counts(d, d.train);
  EXPECT_GT(counts.at("spam"), 1000);
  EXPECT_GT(counts.at("ham"), 3000);
  EXPECT_EQ(label_counts(d, d.test).size(), 2u);
  EXPECT_NEAR(static_cast<double>(d.valid.size()) / static_cast<double>(total), 0.1, 0.01);
  for (const Example& e : d.train.examples) {
    EXPECT_GE(e.ids.size(), 1u);
    EXPECT_LE(e.ids.size(), 128u);
  }
}

TEST(DataReal, TinyShakespeare) {
  DataConfig c;
  c.format = DataFormat::Text;
  c.path = kShakespeare;
  c.tokenizer = TokenizerKind::Char;
  c.max_len = 256;
  c.test_fraction = 0;
  const Dataset d = load_dataset(c, Task::Lm);
  EXPECT_EQ(d.tokenizer->vocab_size(), 65 + 3);
  EXPECT_EQ(d.train.stream.size() + d.valid.stream.size(), 1115394u);
  EXPECT_EQ(d.valid.stream.size(), 111539u);  // the last 10%
  EXPECT_TRUE(d.test.stream.empty());
  EXPECT_EQ(d.train.size(), (1003855 - 1) / 256);
}

// The shipped data is byte for byte what data/README.md describes.
TEST(DataReal, ShippedDataMatchesItsChecksums) {
  const std::string cmd =
      "cd '" HWT_SOURCE_DIR "/data' && sha256sum --quiet --strict -c SHA256SUMS >/dev/null";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
}

// Shipped configs name data relative to the project ("data/atis"); they work from any folder.
TEST(DataReal, ShippedDataIsFoundFromAnyFolder) {
  const fs::path here = fs::current_path();
  fs::current_path(fs::temp_directory_path());
  const Dataset d = load_dataset(jointbert("data/atis", UnseenLabels::Unk), Task::Joint);
  fs::current_path(here);
  EXPECT_EQ(d.train.size(), 4478);
  EXPECT_NE(d.source.find(kAtis), std::string::npos) << d.source;
}

}  // namespace
}  // namespace hwt
