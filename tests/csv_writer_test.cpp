// CsvWriter: RFC 4180 quoting of hwt's CSV outputs, and the project's reader reads them back.
#include "report/csv_writer.h"

#include <gtest/gtest.h>

#include "data/csv.h"

namespace hwt {
namespace {

TEST(CsvWriter, PlainFieldsAsTheyAre) {
  CsvWriter csv({"name", "count", "ratio"});
  csv.values("h200", int64_t{132}, 0.5);
  csv.row({"", "7", "1e-06"});
  EXPECT_EQ(csv.text(), "name,count,ratio\nh200,132,0.5\n,7,1e-06\n");
}

TEST(CsvWriter, QuotesCommasQuotesAndLineBreaks) {
  CsvWriter csv({"a,b", "plain"});
  csv.row({"say \"hi\"", "x"});
  csv.row({"two\nlines", "cr\rhere"});
  csv.row({"\"", "spaces stay bare"});
  EXPECT_EQ(csv.text(),
            "\"a,b\",plain\n"
            "\"say \"\"hi\"\"\",x\n"
            "\"two\nlines\",\"cr\rhere\"\n"
            "\"\"\"\",spaces stay bare\n");
}

TEST(CsvWriter, ReadsBackThroughTheCsvReader) {
  const std::vector<std::vector<std::string>> table = {
      {"run", "note"}, {"lr=1e-3, bf16", "said \"fast\""}, {"multi\nline", ""}};
  CsvWriter csv(table[0]);
  for (size_t r = 1; r < table.size(); ++r) csv.row(table[r]);
  const std::vector<CsvRecord> back = parse_csv(csv.text(), "written.csv");
  ASSERT_EQ(back.size(), table.size());
  for (size_t r = 0; r < table.size(); ++r) EXPECT_EQ(back[r].fields, table[r]) << "record " << r;
}

TEST(CsvWriter, RecordOfTheWrongWidthIsABug) {
  CsvWriter csv({"a", "b"});
  EXPECT_ANY_THROW(csv.row({"only one"}));
}

}  // namespace
}  // namespace hwt
