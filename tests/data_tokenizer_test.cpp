#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>

#include "core/error.h"
#include "data/char_tokenizer.h"
#include "data/labels.h"
#include "data/text_io.h"
#include "data/word_tokenizer.h"

namespace hwt {
namespace {

std::unique_ptr<WordTokenizer> word(std::vector<std::string_view> texts, int64_t min_freq = 1,
                                    int64_t max_vocab = 100, bool lowercase = true,
                                    WordSplit split = WordSplit::Words) {
  WordTokenizerOptions o;
  o.split = split;
  o.lowercase = lowercase;
  o.min_freq = min_freq;
  o.max_vocab = max_vocab;
  return WordTokenizer::train(texts, o);
}

TEST(DataTokenizer, WordVocabMostFrequentFirstTiesByName) {
  // counts: c 3, a 2, b 1, d 1
  const auto tok = word({"b a a c c c", "d"});
  EXPECT_EQ(tok->vocab_size(), 3 + 4);
  EXPECT_EQ(tok->encode("c a b d"), (std::vector<int32_t>{3, 4, 5, 6}));
  EXPECT_EQ(tok->encode("zebra"), (std::vector<int32_t>{Tokenizer::kUnk}));
  EXPECT_EQ(Tokenizer::kPad, 0);
  EXPECT_EQ(Tokenizer::kUnk, 1);
  EXPECT_EQ(Tokenizer::kCls, 2);
}

TEST(DataTokenizer, WordMinFreqAndMaxVocab) {
  const auto by_freq = word({"b a a c c c", "d"}, /*min_freq=*/2);
  EXPECT_EQ(by_freq->vocab_size(), 3 + 2);
  EXPECT_EQ(by_freq->encode("a b"), (std::vector<int32_t>{4, Tokenizer::kUnk}));
  const auto capped = word({"b a a c c c", "d"}, 1, /*max_vocab=*/4);  // specials + "c"
  EXPECT_EQ(capped->vocab_size(), 4);
  EXPECT_EQ(capped->encode("c a"), (std::vector<int32_t>{3, Tokenizer::kUnk}));
}

TEST(DataTokenizer, WordVocabIsDeterministic) {
  const auto a = word({"x y z y", "z w"});
  const auto b = word({"z w", "x y z y"});
  EXPECT_EQ(a->to_json().dump(), b->to_json().dump());
}

TEST(DataTokenizer, WordSplitsPunctuationAndKeepsInnerApostrophes) {
  const std::string text = "Don't stop, it's 5pm!";
  const auto tok = word({text});
  EXPECT_EQ(tok->encode(text).size(), 6u);
  EXPECT_EQ(tok->decode(tok->encode(text)), "don't stop , it's 5pm !");
  // Trailing and leading apostrophes are punctuation.
  EXPECT_EQ(tok->decode(tok->encode("'stop'")), "[UNK] stop [UNK]");
}

TEST(DataTokenizer, WordLowercaseOption) {
  EXPECT_EQ(word({"Hello HELLO hello"})->vocab_size(), 4);
  const auto cased = word({"Hello HELLO hello"}, 1, 100, /*lowercase=*/false);
  EXPECT_EQ(cased->vocab_size(), 6);
  EXPECT_EQ(cased->decode(cased->encode("HELLO")), "HELLO");
}

TEST(DataTokenizer, WhitespaceSplitKeepsOneTokenPerWord) {
  const auto tok = word({"a,b c st.louis"}, 1, 100, true, WordSplit::Whitespace);
  EXPECT_EQ(tok->encode("a,b  c\tst.louis\n").size(), 3u);
  EXPECT_EQ(tok->decode(tok->encode("a,b c")), "a,b c");
}

TEST(DataTokenizer, DecodeSkipsPadAndCls) {
  const auto tok = word({"hi"});
  EXPECT_EQ(tok->decode({Tokenizer::kCls, 3, Tokenizer::kUnk, Tokenizer::kPad}), "hi [UNK]");
  EXPECT_THROW(tok->decode({99}), Error);
}

TEST(DataTokenizer, EncodePrefixStopsEarly) {
  const auto tok = word({"a b c d"});
  EXPECT_EQ(tok->encode_prefix("a b c d", 2), (std::vector<int32_t>{3, 4}));
  const auto chars = CharTokenizer::train({"abcd"});
  EXPECT_EQ(chars->encode_prefix("abcd", 3).size(), 3u);
}

TEST(DataTokenizer, ArbitraryBytesAreSafeAndSerialisable) {
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes += static_cast<char>(i);
  bytes += "caf\xC3\xA9 na\xEFve \xFF\xFE word";  // valid and invalid UTF-8
  const auto tok = word({bytes, bytes});
  const std::string dumped = tok->to_json().dump();  // throws on invalid UTF-8
  const auto back = Tokenizer::from_json(nlohmann::json::parse(dumped));
  EXPECT_EQ(back->encode(bytes), tok->encode(bytes));
  EXPECT_EQ(back->vocab_size(), tok->vocab_size());
  const auto chars = CharTokenizer::train({bytes});
  EXPECT_EQ(chars->vocab_size(), 3 + 256);
  EXPECT_EQ(chars->decode(chars->encode(bytes)), bytes);
  EXPECT_NO_THROW((void)chars->to_json().dump());
}

TEST(DataTokenizer, WordJsonRoundTrip) {
  const auto tok = word({"The cat sat. The dog ran!"}, 1, 100, true, WordSplit::Words);
  const auto back = Tokenizer::from_json(tok->to_json());
  EXPECT_EQ(back->to_json(), tok->to_json());
  EXPECT_EQ(back->encode("the dog sat!"), tok->encode("the dog sat!"));
}

TEST(DataTokenizer, CharVocabIsSortedBytesAfterSpecials) {
  const auto tok = CharTokenizer::train({"cab", "a!"});
  EXPECT_EQ(tok->vocab_size(), 3 + 4);  // ! a b c
  EXPECT_EQ(tok->encode("!abc"), (std::vector<int32_t>{3, 4, 5, 6}));
  EXPECT_EQ(tok->encode("z"), (std::vector<int32_t>{Tokenizer::kUnk}));
  EXPECT_EQ(tok->decode(tok->encode("ab!z")), "ab![UNK]");
  const auto back = Tokenizer::from_json(tok->to_json());
  EXPECT_EQ(back->encode("cab!"), tok->encode("cab!"));
}

// "café" and "Zürich" unseen in training: one [UNK] each, however many bytes they have.
TEST(DataTokenizer, AnUnknownUtf8WordIsOneUnk) {
  const auto tok = word({"the cafe in zurich", "zürich"});
  const std::vector<int32_t> ids = tok->encode("the café in Zürich and Zurich");
  ASSERT_EQ(ids.size(), 6u);
  EXPECT_EQ(ids[1], Tokenizer::kUnk);
  EXPECT_NE(ids[3], Tokenizer::kUnk);  // "Zürich" lowercases (ASCII only) to the seen "zürich"
  EXPECT_EQ(tok->decode(ids), "the [UNK] in zürich [UNK] zurich");
  const auto whitespace = word({"zurich"}, 1, 100, true, WordSplit::Whitespace);
  EXPECT_EQ(whitespace->decode(whitespace->encode("zürich café")), "[UNK] [UNK]");
}

// A character with a byte the vocabulary lacks is one [UNK]; one whose bytes were all seen keeps
// its byte tokens; bytes that are no UTF-8 stay one [UNK] each.
TEST(DataTokenizer, AnUnknownCharacterIsOneUnk) {
  const auto tok = CharTokenizer::train({"cafe Zurich \xC3\xA9"});  // é seen, ü not
  EXPECT_EQ(tok->decode(tok->encode("Z\xC3\xBCrich")), "Z[UNK]rich");
  EXPECT_EQ(tok->encode("Z\xC3\xBCrich").size(), 6u);
  EXPECT_EQ(tok->decode(tok->encode("caf\xC3\xA9")), "caf\xC3\xA9");   // é: two known bytes
  EXPECT_EQ(tok->decode(tok->encode("\xE2\x82\xAC!")), "[UNK][UNK]");  // the euro sign, '!'
  EXPECT_EQ(tok->decode(tok->encode("\xFF\xFE")), "[UNK][UNK]");
  EXPECT_EQ(tok->encode_prefix("\xE2\x82\xAC\xE2\x82\xAC", 1),
            (std::vector<int32_t>{Tokenizer::kUnk}));
}

TEST(DataTokenizer, CharVocabOfFixtureFile) {
  const std::string text = read_text_file(HWT_TEST_DIR "/fixtures/data/tiny.txt");
  EXPECT_EQ(CharTokenizer::train({text})->vocab_size(), 3 + 6);  // a b c ! space newline
}

TEST(DataTokenizer, FromJsonRejectsBadInput) {
  using nlohmann::json;
  for (const json& j :
       {json(3), json::object(), json{{"kind", "bpe"}}, json{{"kind", "word"}},
        json{{"kind", "word"}, {"split", "words"}, {"lowercase", true}, {"words", {"a", "a"}}},
        json{{"kind", "word"}, {"split", "odd"}, {"lowercase", true}, {"words", {"a"}}},
        json{{"kind", "char"}, {"bytes", {98, 97}}}, json{{"kind", "char"}, {"bytes", {300}}},
        json{{"kind", "char"}, {"bytes", "abc"}}})
    EXPECT_THROW(Tokenizer::from_json(j), InputError) << j.dump();
}

TEST(DataLabels, SortedIdsLookupAndJson) {
  LabelSet set = LabelSet::sorted({"b", "a", "b", "c"});
  EXPECT_EQ(set.size(), 3);
  EXPECT_EQ(set.id("a"), 0);
  EXPECT_EQ(set.id("c"), 2);
  EXPECT_EQ(set.id("zzz"), -1);
  EXPECT_EQ(set.name(1), "b");
  EXPECT_EQ(set.add("b"), 1);
  EXPECT_EQ(set.add(std::string(LabelSet::kUnseen)), 3);
  const LabelSet back = LabelSet::from_json(set.to_json());
  EXPECT_EQ(back.names(), set.names());
  EXPECT_THROW(LabelSet::from_json(nlohmann::json::array({"a", "a"})), InputError);
  EXPECT_THROW(LabelSet::from_json(nlohmann::json{{"a", 1}}), InputError);  // an object
  EXPECT_THROW(LabelSet::from_json(nlohmann::json::array({1, 2})), InputError);
  EXPECT_THROW((void)set.name(7), Error);
}

}  // namespace
}  // namespace hwt
