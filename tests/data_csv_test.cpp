#include <gtest/gtest.h>

#include "core/error.h"
#include "data/csv.h"
#include "data/dataset.h"

namespace hwt {
namespace {

using Fields = std::vector<std::string>;

TEST(DataCsv, QuotedFieldsHoldCommasQuotesAndNewlines) {
  const auto r = parse_csv("a,b,c\n\"x, y\",\"say \"\"hi\"\"\",\"two\nlines\"\nlast,,\n", "f.csv");
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].fields, (Fields{"a", "b", "c"}));
  EXPECT_EQ(r[1].fields, (Fields{"x, y", "say \"hi\"", "two\nlines"}));
  EXPECT_EQ(r[2].fields, (Fields{"last", "", ""}));
  EXPECT_EQ(r[1].line, 2);
  EXPECT_EQ(r[2].line, 4);  // the quoted newline counts
}

TEST(DataCsv, CrlfBlankLinesAndMissingFinalNewline) {
  const auto r = parse_csv("a,b\r\n\r\n\"q\"\r\n1,2", "f.csv");
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].fields, (Fields{"a", "b"}));
  EXPECT_EQ(r[1].fields, (Fields{"q"}));
  EXPECT_EQ(r[1].line, 3);
  EXPECT_EQ(r[2].fields, (Fields{"1", "2"}));
  EXPECT_EQ(parse_csv("\"\"", "f.csv")[0].fields, (Fields{""}));
  EXPECT_TRUE(parse_csv("", "f.csv").empty());
}

TEST(DataCsv, MalformedQuotingNamesFileAndLine) {
  try {
    parse_csv("a,b\n1,\"open\nnever closed\n", "bad.csv");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.csv line 2"), std::string::npos) << e.what();
  }
  try {
    parse_csv("a,b\n\"x\"y,2\n", "bad.csv");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.csv line 2"), std::string::npos) << e.what();
  }
}

DataConfig table_config(DataFormat format, const std::string& file) {
  DataConfig c;
  c.format = format;
  c.path = HWT_TEST_DIR "/fixtures/data/" + file;
  c.valid_fraction = 0;
  c.test_fraction = 0;
  c.min_freq = 1;
  return c;
}

TEST(DataCsv, CsvDatasetUsesNamedColumns) {
  const Dataset d = load_dataset(table_config(DataFormat::Csv, "quoting.csv"), Task::Classify);
  ASSERT_EQ(d.train.size(), 4);
  EXPECT_EQ(d.labels.names(), (Fields{"neg", "pos"}));
  EXPECT_EQ(d.valid.size(), 0);
  // Example order is shuffled; find the two-line one by its text.
  bool found = false;
  for (const Example& e : d.train.examples)
    found |= d.tokenizer->decode(e.ids) == "two lines" && d.labels.name(e.label) == "pos";
  EXPECT_TRUE(found);
}

TEST(DataCsv, TsvAndJsonlDatasets) {
  const Dataset tsv = load_dataset(table_config(DataFormat::Tsv, "reviews.tsv"), Task::Classify);
  EXPECT_EQ(tsv.train.size(), 3);
  EXPECT_EQ(tsv.labels.names(), (Fields{"neg", "pos"}));
  const Dataset jsonl =
      load_dataset(table_config(DataFormat::Jsonl, "reviews.jsonl"), Task::Classify);
  EXPECT_EQ(jsonl.train.size(), 3);
  EXPECT_EQ(jsonl.labels.names(), (Fields{"1", "neg", "pos"}));
}

TEST(DataCsv, ExplicitValidationFile) {
  DataConfig c = table_config(DataFormat::Tsv, "reviews.tsv");
  c.valid_path = c.path;
  c.test_fraction = 0.34;               // one of three examples split off for test
  c.unseen_labels = UnseenLabels::Unk;  // the split may leave one class out of training
  const Dataset d = load_dataset(c, Task::Classify);
  EXPECT_EQ(d.train.size(), 2);
  EXPECT_EQ(d.valid.size(), 3);
  EXPECT_EQ(d.test.size(), 1);
  EXPECT_NE(d.source.find("reviews.tsv"), std::string::npos);
}

}  // namespace
}  // namespace hwt
