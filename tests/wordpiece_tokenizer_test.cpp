// BERT's WordPiece tokenizer: the basic tokenisation (cleaning, CJK, accents, punctuation) and
// the greedy longest-match pieces on hand-checked cases, BERT's specials where the vocabulary
// puts them (in examples, padding and word dropout too), bad vocabularies, and the ids Hugging
// Face tokenizers gives for tests/fixtures/wordpiece/texts.txt (make_expected.py) when recorded.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <random>
#include <sstream>

#include "cli_util.h"
#include "core/error.h"
#include "data/bert_basic_tokenizer.h"
#include "data/dataset.h"
#include "data/wordpiece_tokenizer.h"

namespace hwt {
namespace {

using Ids = std::vector<int32_t>;
using Words = std::vector<std::string>;

const std::filesystem::path kFixtures = std::filesystem::path(HWT_TEST_DIR) / "fixtures/wordpiece";

// A vocabulary of `tokens`, ids in order.
std::unique_ptr<WordPieceTokenizer> tiny(const std::vector<std::string>& tokens,
                                         bool lowercase = true) {
  std::string text;
  for (const std::string& t : tokens) text += t + "\n";
  return std::make_unique<WordPieceTokenizer>(text, "tiny vocab.txt", lowercase);
}

const std::vector<std::string> kTiny = {
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "un",    "##aff", "##able", "the",    "a",
    "##a",   ",",     "caf",   "##é",   "##e",    "hello", "世",    "界",     "##able", "!"};

// The fixture vocabulary (BERT's layout), loaded once.
const WordPieceTokenizer& fixture(bool lowercase) {
  static const auto uncased = WordPieceTokenizer::load((kFixtures / "vocab.txt").string(), true);
  static const auto cased = WordPieceTokenizer::load((kFixtures / "vocab.txt").string(), false);
  return lowercase ? *uncased : *cased;
}

Words words(std::string_view text, bool lowercase = true) {
  return BertBasicTokenizer(lowercase).words(text);
}

TEST(WordPieceBasic, SplitsOnWhitespaceAndPunctuation) {
  EXPECT_EQ(words("Hello, World!"), (Words{"hello", ",", "world", "!"}));
  EXPECT_EQ(words("Hello, World!", false), (Words{"Hello", ",", "World", "!"}));
  EXPECT_EQ(words("  a--b\t\tc\nd\re  "), (Words{"a", "-", "-", "b", "c", "d", "e"}));
  EXPECT_EQ(words("don't (x) [y] {z} a_b a~b"),
            (Words{"don", "'", "t", "(", "x", ")", "[", "y", "]", "{", "z", "}", "a", "_", "b", "a",
                   "~", "b"}));
  // Unicode punctuation splits; symbols (currency, maths) stay inside words.
  EXPECT_EQ(words("\xC2\xBFqu\xC3\xA9?"), (Words{"\xC2\xBF", "que", "?"}));  // ¿qué?
  EXPECT_EQ(words("\xC2\xA7"
                  "1 \xE2\x82\xAC"
                  "5 a\xC3\x97"
                  "b"),  // §1 €5 a×b
            (Words{"\xC2\xA7", "1",
                   "\xE2\x82\xAC"
                   "5",
                   "a\xC3\x97"
                   "b"}));
  EXPECT_EQ(words("\xE2\x80\x94\xE2\x80\x9Cq\xE2\x80\x9D"),  // —“q”
            (Words{"\xE2\x80\x94", "\xE2\x80\x9C", "q", "\xE2\x80\x9D"}));
  EXPECT_TRUE(words("").empty());
  EXPECT_TRUE(words(" \t\n ").empty());
}

TEST(WordPieceBasic, AccentsStrippedOnlyWhenLowercasing) {
  const std::string text =
      "Caf\xC3\xA9 Na\xC3\xAFve \xC3\x89"
      "COLE";  // Café Naïve ÉCOLE
  EXPECT_EQ(words(text), (Words{"cafe", "naive", "ecole"}));
  EXPECT_EQ(words(text, false), (Words{"Caf\xC3\xA9", "Na\xC3\xAFve",
                                       "\xC3\x89"
                                       "COLE"}));
  // Decomposed input: the combining mark goes when uncased and stays when cased.
  EXPECT_EQ(words("cafe\xCC\x81"), (Words{"cafe"}));
  EXPECT_EQ(words("cafe\xCC\x81", false), (Words{"cafe\xCC\x81"}));
  // Greek and Cyrillic lowercase (no final-sigma rule: BERT's is per character).
  EXPECT_EQ(words("\xCE\xA3\xCE\x8A\xCE\xA3\xCE\xA5\xCE\xA6\xCE\x9F\xCE\xA3"),  // ΣΊΣΥΦΟΣ
            (Words{"\xCF\x83\xCE\xB9\xCF\x83\xCF\x85\xCF\x86\xCE\xBF\xCF\x83"}));
  EXPECT_EQ(words("\xD0\x9C\xD0\xBE\xD1\x81\xD0\xBA\xD0\xB2\xD0\xB0"),  // Москва
            (Words{"\xD0\xBC\xD0\xBE\xD1\x81\xD0\xBA\xD0\xB2\xD0\xB0"}));
  // NFD's singletons: the Kelvin sign is K, the Angstrom sign A with a ring.
  EXPECT_EQ(words("\xE2\x84\xAA"
                  "elvin \xE2\x84\xAB"),
            (Words{"kelvin", "a"}));
  // U+1FEF GREEK VARIA decomposes to "`", which then splits as punctuation.
  EXPECT_EQ(words("a\xE1\xBF\xAF"
                  "b"),
            (Words{"a", "`", "b"}));
  EXPECT_EQ(words("a\xE1\xBF\xAF"
                  "b",
                  false),
            (Words{"a\xE1\xBF\xAF"
                   "b"}));
  // Hangul syllables decompose to jamo when uncased (NFD), as in BERT's uncased models.
  EXPECT_EQ(words("\xED\x95\x9C"), (Words{"\xE1\x84\x92\xE1\x85\xA1\xE1\x86\xAB"}));  // 한
}

TEST(WordPieceBasic, CjkIdeographsAreWordsOfTheirOwn) {
  // hello世界world; kana are not in BERT's ranges and stay together.
  EXPECT_EQ(words("hello\xE4\xB8\x96\xE7\x95\x8Cworld"),
            (Words{"hello", "\xE4\xB8\x96", "\xE7\x95\x8C", "world"}));
  EXPECT_EQ(words("\xE3\x81\x93\xE3\x82\x93\xE3\x81\xAB"),
            (Words{"\xE3\x81\x93\xE3\x82\x93\xE3\x81\xAB"}));
  EXPECT_TRUE(is_bert_cjk(0x4E00) && is_bert_cjk(0x9FFF) && is_bert_cjk(0x20000) &&
              is_bert_cjk(0xF900) && is_bert_cjk(0x2F800) && is_bert_cjk(0x2B820));
  EXPECT_FALSE(is_bert_cjk(0x3042) || is_bert_cjk(0xAC00) || is_bert_cjk(0x4DC0));
}

TEST(WordPieceBasic, ControlCharactersDroppedAndWhitespaceSplits) {
  EXPECT_EQ(words(std::string("a\x01"
                              "b\x7f"
                              "c\x00"
                              "d",
                              7)),
            (Words{"abcd"}));
  // U+000B, U+000C and U+0085 are control characters: dropped, not spaces (as BERT does).
  EXPECT_EQ(words("x\x0By\x0Cz\xC2\x85w"), (Words{"xyzw"}));
  EXPECT_EQ(words("zero\xE2\x80\x8Bwidth bom\xEF\xBB\xBFhere soft\xC2\xAD"
                  "hy"),
            (Words{"zerowidth", "bomhere", "softhy"}));
  // No-break, ideographic and line-separator spaces split.
  EXPECT_EQ(words("a\xC2\xA0"
                  "b\xE3\x80\x80"
                  "c\xE2\x80\xA8"
                  "d"),
            (Words{"a", "b", "c", "d"}));
  EXPECT_EQ(words("a\xEF\xBF\xBD"
                  "b \xEE\x80\x80"),
            (Words{"ab"}));                             // U+FFFD, private use
  EXPECT_EQ(words("a\xCD\xB8"), (Words{"a\xCD\xB8"}));  // unassigned U+0378 stays
}

TEST(WordPieceBasic, InvalidUtf8IsDroppedWithoutCrashing) {
  EXPECT_EQ(words("a\xFF"
                  "b\xC0\xAF"
                  "c"),
            (Words{"abc"}));                        // stray byte, overlong "/"
  EXPECT_EQ(words("a\xE2\x82"), (Words{"a"}));      // cut short
  EXPECT_EQ(words("\xED\xA0\x80x"), (Words{"x"}));  // a surrogate
  std::mt19937_64 rng(7);
  for (int round = 0; round < 200; ++round) {
    std::string text;
    for (size_t i = 0, n = rng() % 300; i < n; ++i) text += static_cast<char>(rng() % 256);
    for (bool lower : {true, false})
      for (const std::string& w : words(text, lower)) EXPECT_FALSE(w.empty());
  }
}

TEST(WordPieceTokenizer, GreedyLongestMatchFirst) {
  const auto tok = tiny(kTiny);
  EXPECT_EQ(tok->encode("unaffable"), (Ids{5, 6, 18}));  // un ##aff ##able (the later ##able)
  EXPECT_EQ(tok->decode({5, 6, 18}), "unaffable");
  EXPECT_EQ(tok->encode("UnAffable, the!"), (Ids{5, 6, 18, 11, 8, 19}));
  // No complete cut: the whole word is one [UNK], not its matched start.
  EXPECT_EQ(tok->encode("unaffablex the"), (Ids{1, 8}));
  EXPECT_EQ(tok->encode("zzz"), (Ids{1}));
  // Pieces cut at code points: café is caf ##é cased, caf ##e uncased.
  EXPECT_EQ(tiny(kTiny, false)->encode("caf\xC3\xA9"), (Ids{12, 13}));
  EXPECT_EQ(tok->encode("caf\xC3\xA9"), (Ids{12, 14}));
  EXPECT_EQ(tok->encode("hello\xE4\xB8\x96\xE7\x95\x8C"), (Ids{15, 16, 17}));
  EXPECT_EQ(tok->encode_prefix("the the the the", 2), (Ids{8, 8}));
  EXPECT_TRUE(tok->encode_prefix("the", 0).empty());
}

TEST(WordPieceTokenizer, WordsLongerThan100CharactersAreUnknown) {
  const auto tok = tiny(kTiny);
  const Ids hundred = tok->encode(std::string(100, 'a'));
  ASSERT_EQ(hundred.size(), 100u);
  EXPECT_EQ(hundred[0], 9);
  EXPECT_EQ(hundred[99], 10);
  EXPECT_EQ(tok->encode(std::string(101, 'a') + " a"), (Ids{1, 9}));
  // Characters, not bytes: 60 two-byte letters are 60.
  std::string e60;
  for (int i = 0; i < 60; ++i) e60 += "\xC3\xA9";
  EXPECT_EQ(tiny(kTiny, false)->encode(e60), (Ids{1}));  // no "é" to start with
  EXPECT_EQ(tok->encode(e60), (Ids{1}));                 // "e" is not in the vocabulary
}

TEST(WordPieceTokenizer, SpecialsComeFromTheVocabularyNeverFromText) {
  const WordPieceTokenizer& tok = fixture(true);
  EXPECT_EQ(tok.pad_id(), 0);
  EXPECT_EQ(tok.unk_id(), 100);
  EXPECT_EQ(tok.cls_id(), 101);
  EXPECT_EQ(tok.sep_id(), 102);
  EXPECT_EQ(tok.mask_id(), 103);
  const Ids ids = tok.encode("[CLS] x [SEP] [PAD] [MASK]");
  for (int32_t id : ids) EXPECT_TRUE(id != 0 && id != 101 && id != 102 && id != 103) << id;
  EXPECT_EQ(tok.token(ids[0]), "[");
  EXPECT_EQ(tok.decode({101, tok.encode("the")[0], 100, 102, 0}), "the [UNK]");
}

TEST(WordPieceTokenizer, SingleAndPairEncodings) {
  const auto tok = tiny(kTiny);
  const WordPieceTokenizer::Encoding one = tok->encode_single("the unaffable");
  EXPECT_EQ(one.ids, (Ids{2, 8, 5, 6, 18, 3}));
  EXPECT_EQ(one.type_ids, (Ids{0, 0, 0, 0, 0, 0}));
  const WordPieceTokenizer::Encoding two = tok->encode_pair("the", "a, hello");
  EXPECT_EQ(two.ids, (Ids{2, 8, 3, 9, 11, 15, 3}));
  EXPECT_EQ(two.type_ids, (Ids{0, 0, 0, 1, 1, 1, 1}));
  EXPECT_EQ(tok->encode_pair("", "").ids, (Ids{2, 3, 3}));
  // Classification examples: [CLS] text [SEP] within max_len.
  EXPECT_EQ(tok->encode_example("the the the", 4), (Ids{2, 8, 8, 3}));
  EXPECT_EQ(tok->encode_example("the", 2), (Ids{2, 3}));
}

TEST(WordPieceTokenizer, BadVocabularies) {
  const test::TempDir dir("wordpiece_vocab");
  const auto message = [&](const std::string& content) -> std::string {
    dir.write("vocab.txt", content);
    try {
      WordPieceTokenizer::load(dir / "vocab.txt", true);
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_NE(message("[PAD]\n[CLS]\n[SEP]\na\n").find("has no [UNK] token"), std::string::npos);
  EXPECT_NE(message("[PAD]\n[UNK]\n[SEP]\n").find("[CLS]"), std::string::npos);
  EXPECT_NE(message("[PAD]\n[UNK]\n[CLS]\n").find("[SEP]"), std::string::npos);
  EXPECT_NE(message("[UNK]\n[CLS]\n[SEP]\n").find("[PAD]"), std::string::npos);
  EXPECT_NE(message("[UNK]\n[CLS]\n[SEP]\n").find("vocab.txt"), std::string::npos);
  EXPECT_NE(message("").find("is empty"), std::string::npos);
  EXPECT_EQ(message("[PAD]\r\n[UNK] \r\n[CLS]\n[SEP]"), "no error");  // CRLF, no final newline
  EXPECT_THROW(WordPieceTokenizer::load(dir / "none.txt", true), InputError);
}

// The JSON embeds vocab.txt, so the file may change or go; JSON without it (older checkpoints)
// reads the file, which must be the one it was made from.
TEST(WordPieceTokenizer, JsonRoundTripRefusesAChangedVocabulary) {
  const test::TempDir dir("wordpiece_json");
  dir.write("vocab.txt", test::slurp(kFixtures / "vocab.txt"));
  const auto tok = WordPieceTokenizer::load(dir / "vocab.txt", false);
  const nlohmann::json j = tok->to_json();
  EXPECT_EQ(j.at("kind"), "wordpiece");
  const auto back = Tokenizer::from_json(j);
  EXPECT_EQ(back->encode("Thou Art"), tok->encode("Thou Art"));
  EXPECT_EQ(back->vocab_size(), tok->vocab_size());
  EXPECT_EQ(back->cls_id(), 101);
  dir.write("vocab.txt", test::slurp(kFixtures / "vocab.txt") + "extra\n");
  EXPECT_EQ(Tokenizer::from_json(j)->vocab_size(), tok->vocab_size());
  nlohmann::json by_path = j;
  by_path.erase("text");
  EXPECT_THROW(Tokenizer::from_json(by_path), InputError);
}

TEST(WordPieceTokenizer, FixtureTextsGiveIdsInRangeAndNoSpecials) {
  const std::string texts = test::slurp(kFixtures / "texts.txt");
  ASSERT_GT(texts.size(), 1000u);
  for (bool lower : {true, false}) {
    const WordPieceTokenizer& tok = fixture(lower);
    const Ids ids = tok.encode(texts);
    ASSERT_GT(ids.size(), 1000u);
    int64_t unknown = 0;
    for (int32_t id : ids) {
      ASSERT_GE(id, 0);
      ASSERT_LT(id, tok.vocab_size());
      ASSERT_TRUE(id != tok.pad_id() && id != tok.cls_id() && id != tok.sep_id() &&
                  id != tok.mask_id());
      unknown += id == tok.unk_id();
    }
    EXPECT_LT(unknown * 10, std::ssize(ids)) << "most pieces should be known";
    // Decoding joins the ## pieces back into the basic tokenizer's words.
    const std::string line = "the king hath spoken, and my lord is gone";
    Words joined;
    for (const std::string& w : words(tok.decode(tok.encode(line)), lower)) joined.push_back(w);
    EXPECT_EQ(joined, words(line, lower));
  }
}

TEST(WordPieceTokenizer, RandomBytesGiveIdsInRange) {
  std::mt19937_64 rng(11);
  const std::vector<std::string> fragments = {
      "the", " ",  "##", "[CLS]",    "\xC3\xA9",        "\xE4\xB8\x96",
      "\t",  "\n", "!",  "\xCC\x81", "\xF0\x9F\x98\x80"};
  for (int round = 0; round < 300; ++round) {
    std::string text;
    for (size_t i = 0, n = rng() % 200; i < n; ++i)
      text += rng() % 3 == 0 ? fragments[rng() % fragments.size()]
                             : std::string(1, static_cast<char>(rng() % 256));
    for (bool lower : {true, false}) {
      const WordPieceTokenizer& tok = fixture(lower);
      for (int32_t id : tok.encode(text)) {
        ASSERT_GE(id, 0);
        ASSERT_LT(id, tok.vocab_size());
        ASSERT_TRUE(id != tok.pad_id() && id != tok.cls_id() && id != tok.sep_id());
      }
    }
  }
}

// One JSON array per line of `path`.
std::vector<Ids> read_jsonl(const std::filesystem::path& path) {
  std::vector<Ids> rows;
  std::stringstream in(test::slurp(path));
  for (std::string line; std::getline(in, line);)
    rows.push_back(nlohmann::json::parse(line).get<Ids>());
  return rows;
}

TEST(WordPieceTokenizer, MatchesHuggingFaceTokenizersOnFixtureTexts) {
  for (const auto& [name, lower] : {std::pair{"uncased", true}, std::pair{"cased", false}}) {
    const std::filesystem::path expected = kFixtures / ("expected_" + std::string(name) + ".jsonl");
    if (!std::filesystem::exists(expected))
      GTEST_SKIP() << "expected ids not generated yet (tests/fixtures/wordpiece/make_expected.py)";
    const std::vector<Ids> rows = read_jsonl(expected);
    // texts.txt is one text per "\n"-ended line (U+0085 and U+2028 are inside lines).
    std::vector<std::string> texts;
    std::stringstream in(test::slurp(kFixtures / "texts.txt"));
    for (std::string line; std::getline(in, line, '\n');) texts.push_back(line);
    ASSERT_EQ(rows.size(), texts.size()) << name;
    int mismatches = 0;
    for (size_t i = 0; i < texts.size(); ++i) {
      const Ids ids = fixture(lower).encode(texts[i]);
      if (ids != rows[i] && ++mismatches <= 5)
        ADD_FAILURE() << name << " line " << i + 1 << ": " << texts[i]
                      << "\n hwt:  " << nlohmann::json(ids).dump()
                      << "\n want: " << nlohmann::json(rows[i]).dump();
    }
    EXPECT_EQ(mismatches, 0) << name;
  }
}

// A vocabulary with every id one higher than BERT's ([PAD] 1, [UNK] 101, [CLS] 102, [SEP] 103),
// so a dataset that wrote kPad, kUnk or kCls instead of asking the tokenizer shows.
std::string shifted_vocab() {
  return "[unused_first]\n" + test::slurp(kFixtures / "vocab.txt");
}

TEST(WordPieceTokenizer, ClassificationExamplesUseTheVocabularysSpecials) {
  const test::TempDir dir("wordpiece_data");
  dir.write("train.tsv", test::tiny_sentiment_tsv(40, 3));
  dir.write("vocab.txt", shifted_vocab());
  DataConfig c;
  c.format = DataFormat::Tsv;
  c.path = dir / "train.tsv";
  c.tokenizer = TokenizerKind::WordPiece;
  c.vocab = dir / "vocab.txt";
  c.max_len = 32;
  const Dataset d = load_dataset(c, Task::Classify);
  ASSERT_EQ(d.tokenizer->pad_id(), 1);
  ASSERT_FALSE(d.train.examples.empty());
  for (const Example& e : d.train.examples) {
    ASSERT_GE(e.ids.size(), 3u);
    EXPECT_LE(std::ssize(e.ids), c.max_len);
    EXPECT_EQ(e.ids.front(), 102);
    EXPECT_EQ(e.ids.back(), 103);
  }
  BatchIterator it(d, d.train, 16, c.max_len, false, 1);
  it.set_word_dropout(0.999);
  Batch b;
  ASSERT_TRUE(it.next(b));
  bool padded = false;
  int64_t words_in = 0, dropped = 0;
  for (int64_t i = 0; i < b.batch; ++i) {
    for (int64_t t = 0; t < b.seq; ++t) {
      const int32_t id = b.ids[static_cast<size_t>(i * b.seq + t)];
      const int32_t len = b.lengths[static_cast<size_t>(i)];
      if (t >= len) {
        EXPECT_EQ(id, 1) << "padding is the vocabulary's [PAD]";
        padded = true;
      } else if (t == 0) {
        EXPECT_EQ(id, 102);
      } else if (t == len - 1) {
        EXPECT_EQ(id, 103);
      } else {
        ++words_in;
        dropped += id == 101;  // word dropout writes the vocabulary's [UNK]
      }
    }
  }
  EXPECT_TRUE(padded);
  EXPECT_GE(dropped * 10, words_in * 9);
}

TEST(WordPieceTokenizer, CliEncodesPairsAndDecodes) {
  const test::TempDir dir("wordpiece_cli");
  dir.write("pairs.txt", "the king\tmy lord\nhello\n");
  const std::string vocab = " --tokenizer wordpiece --vocab " + (kFixtures / "vocab.txt").string();
  const test::CliResult pairs =
      test::run_hwt("tokenizer encode --pair" + vocab + " " + (dir / "pairs.txt"), dir);
  ASSERT_EQ(pairs.exit_code, 0) << pairs.err;
  std::stringstream out(pairs.out);
  std::string first, second;
  std::getline(out, first);
  std::getline(out, second);
  const auto a = nlohmann::json::parse(first), b = nlohmann::json::parse(second);
  const Ids ids = a.at("ids").get<Ids>(), types = a.at("type_ids").get<Ids>();
  ASSERT_EQ(ids.size(), types.size());
  EXPECT_EQ(ids.front(), 101);
  EXPECT_EQ(ids.back(), 102);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 102), 2);
  EXPECT_EQ(types.front(), 0);
  EXPECT_EQ(types.back(), 1);
  EXPECT_EQ(b.at("type_ids").get<Ids>(), Ids(b.at("ids").size(), 0));

  dir.write("text.txt", "The KING hath spoken\n");
  const test::CliResult lines =
      test::run_hwt("tokenizer encode --lines" + vocab + " " + (dir / "text.txt"), dir);
  ASSERT_EQ(lines.exit_code, 0) << lines.err;
  dir.write("text.ids", lines.out);
  const test::CliResult back =
      test::run_hwt("tokenizer decode --lines" + vocab + " " + (dir / "text.ids"), dir);
  ASSERT_EQ(back.exit_code, 0) << back.err;
  EXPECT_EQ(back.out, "the king hath spoken\n");
  const test::CliResult cased =
      test::run_hwt("tokenizer encode --cased" + vocab + " " + (dir / "text.txt"), dir);
  ASSERT_EQ(cased.exit_code, 0) << cased.err;
  EXPECT_NE(cased.out, lines.out);
}

}  // namespace
}  // namespace hwt
