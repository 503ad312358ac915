// Regression tests of what the fuzz targets (tests/fuzz, scripts/fuzz.sh) found: each input that
// once crashed, hung or failed with an internal error now gets its InputError (or its result).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/run_config.h"

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

}  // namespace
}  // namespace hwt
