// The golden comparison lets floats move within their tolerance and nothing else.
#include "golden_compare.h"

#include <gtest/gtest.h>

namespace hwt::test {
namespace {

std::vector<std::string> differences(const std::string& want, const std::string& got,
                                     double relative = 1e-5) {
  Comparison c;
  compare_json(nlohmann::json::parse(want), nlohmann::json::parse(got), "answer", relative,
               {"seconds"}, c);
  return c.differences;
}

TEST(GoldenCompare, FloatsWithinToleranceAgree) {
  // A drift measured between two CPUs (AMD EPYC against the Intel recording): 3e-8 relative.
  EXPECT_TRUE(
      differences(R"({"loss": 0.470930444701644})", R"({"loss": 0.47093046046485587})").empty());
  EXPECT_TRUE(differences(R"([1.0, -2.5e-3])", R"([1.000009, -2.50002e-3])").empty());
}

TEST(GoldenCompare, FloatsPastToleranceDiffer) {
  const auto d = differences(R"({"loss": 0.4709})", R"({"loss": 0.4710})");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_NE(d[0].find("answer.loss: 0.4709 recorded, 0.471 now"), std::string::npos) << d[0];
  EXPECT_EQ(differences(R"([1.0])", R"([1.00002])").size(), 1u);
  EXPECT_EQ(differences(R"([1e-9])", R"([-1e-9])").size(), 1u);
  // The analyses' tolerance is tighter: what passes for a loss fails for an energy.
  EXPECT_EQ(differences(R"({"energy_j": 2.0})", R"({"energy_j": 2.000001})", 1e-9).size(), 1u);
}

TEST(GoldenCompare, IntegersStringsAndKeysAreExact) {
  EXPECT_EQ(differences(R"({"steps": 8})", R"({"steps": 9})").size(), 1u);
  EXPECT_EQ(differences(R"({"params": 124439808})", R"({"params": 124439809})").size(), 1u);
  EXPECT_EQ(differences(R"({"label": "flight"})", R"({"label": "flights"})").size(), 1u);
  EXPECT_EQ(differences(R"({"ok": true})", R"({"ok": false})").size(), 1u);
  EXPECT_EQ(differences(R"({"a": 1})", R"({"b": 1})").size(), 1u);
  EXPECT_EQ(differences(R"([1, 2])", R"([1, 2, 3])").size(), 1u);
  // A count that turns into a float has changed, even at the same value.
  EXPECT_EQ(differences(R"({"steps": 8})", R"({"steps": 8.0})").size(), 1u);
}

TEST(GoldenCompare, NewKeysAndUncomparedKeysPass) {
  EXPECT_TRUE(differences(R"({"a": 1})", R"({"a": 1, "b": 2})").empty());
  EXPECT_TRUE(differences(R"({"seconds": 1.0, "a": [{"b": "x"}]})",
                          R"({"seconds": 9.0, "a": [{"b": "x", "c": 3}]})")
                  .empty());
}

TEST(GoldenCompare, EveryDifferenceIsReportedWithItsPlace) {
  const auto d =
      differences(R"({"a": [1, {"b": 2.0}], "c": "x"})", R"({"a": [2, {"b": 3.0}], "c": "y"})");
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0], "answer.a[0]: 1 recorded, 2 now");
  EXPECT_NE(d[1].find("answer.a[1].b: 2.0 recorded, 3.0 now"), std::string::npos) << d[1];
  EXPECT_EQ(d[2], R"(answer.c: "x" recorded, "y" now)");
}

TEST(GoldenCompare, ReportsTheLargestFloatDrift) {
  Comparison c;
  compare_json(nlohmann::json::parse(R"({"a": [1.0, 4.0], "b": 2.0, "n": 3})"),
               nlohmann::json::parse(R"({"a": [1.0, 4.0001], "b": 2.0, "n": 4})"), "answer", 1e-3,
               {}, c);
  EXPECT_NEAR(c.largest_float_drift, 0.0001 / 4.0001, 1e-12);
  EXPECT_EQ(c.differences.size(), 1u);  // the integer, not the float within 1e-3
}

TEST(GoldenCompare, ToleranceFollowsTheKindOfValue) {
  EXPECT_GT(float_tolerance("train"), float_tolerance("sim"));
  EXPECT_EQ(float_tolerance("eval"), float_tolerance("train"));
  EXPECT_EQ(float_tolerance("shape"), float_tolerance("estimate"));
}

}  // namespace
}  // namespace hwt::test
