// Regression tests of what the fuzz targets (tests/fuzz, scripts/fuzz.sh) found: each input that
// once crashed, hung or failed with an internal error now gets its InputError (or its result).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/run_config.h"
#include "data/gpt2_vocabulary.h"

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

}  // namespace
}  // namespace hwt
