// `hwt tokenizer train`: the merge learner on hand-worked examples, the byte-level tokenizer.json
// and the WordPiece vocab.txt it writes (their layout, that hwt's own readers take them and that
// the learned tokens cover the corpus), and the command's errors.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <set>

#include "cli_util.h"
#include "core/error.h"
#include "core/files.h"
#include "core/paths.h"
#include "data/hf_tokenizer.h"
#include "data/merge_learner.h"
#include "data/text_io.h"
#include "data/tokenizer_training.h"
#include "data/wordpiece_tokenizer.h"

namespace hwt {
namespace {

const std::string kShakespeare = HWT_SOURCE_DIR "/data/tinyshakespeare/input.txt";

// The texts of the learned merges, in order.
std::vector<std::string> merge_texts(const LearnedMerges& m) {
  std::vector<std::string> out;
  for (const LearnedMerges::Merge& merge : m.merges)
    out.push_back(m.symbols[static_cast<size_t>(merge.merged)]);
  return out;
}

// Words of single-character symbols over the sorted alphabet of their characters.
LearnedMerges learn_chars(const std::vector<std::pair<std::string, int64_t>>& words,
                          int64_t min_count) {
  std::set<char> chars;
  for (const auto& [w, n] : words) chars.insert(w.begin(), w.end());
  const std::vector<char> alphabet(chars.begin(), chars.end());
  std::vector<WordCount> counts;
  for (const auto& [w, n] : words) {
    WordCount c{{}, n};
    for (char ch : w)
      c.symbols.push_back(static_cast<int32_t>(
          std::lower_bound(alphabet.begin(), alphabet.end(), ch) - alphabet.begin()));
    counts.push_back(c);
  }
  MergeLearnerOptions o;
  o.max_symbols = 1000;
  o.min_count = min_count;
  std::vector<std::string> symbols;
  for (char ch : alphabet) symbols.emplace_back(1, ch);
  return learn_merges(symbols, counts, o);
}

// Sennrich et al.'s example vocabulary (without their end-of-word mark), worked by hand: pair
// counts at the start are e s 9, s t 9, w e 8, l o 7, o w 7, n e 6, e w 6, ...; ties go to the
// pair with the smaller ids (alphabet d e i l n o r s t w).
TEST(MergeLearner, LearnsTheMostFrequentPairFirst) {
  const std::vector<std::pair<std::string, int64_t>> words = {
      {"low", 5}, {"lower", 2}, {"newest", 6}, {"widest", 3}};
  EXPECT_EQ(merge_texts(learn_chars(words, 1)),
            (std::vector<std::string>{"es", "est", "lo", "low", "ew", "new", "newest", "dest",
                                      "idest", "widest", "er", "lower"}));
  // "dest" is seen 3 times: below a minimum count of 4, learning stops before it.
  EXPECT_EQ(merge_texts(learn_chars(words, 4)),
            (std::vector<std::string>{"es", "est", "lo", "low", "ew", "new", "newest"}));
}

TEST(MergeLearner, StopsAtTheVocabularySize) {
  const std::vector<std::pair<std::string, int64_t>> words = {{"abcabc", 4}};
  MergeLearnerOptions o;
  o.max_symbols = 4;  // 3 letters + 1 merge
  const LearnedMerges m = learn_merges({"a", "b", "c"}, {{{0, 1, 2, 0, 1, 2}, 4}}, o);
  EXPECT_EQ(merge_texts(m), (std::vector<std::string>{"ab"}));
  EXPECT_EQ(m.symbols.size(), 4u);
}

// With a continuation prefix, a merge drops the right symbol's prefix: a + ##b = ab,
// ##a + ##b = ##ab. All three pairs of "abab" are seen 3 times; (a, ##b) has the smallest ids.
TEST(MergeLearner, JoinsContinuationsWithoutTheirPrefix) {
  MergeLearnerOptions o;
  o.max_symbols = 100;
  o.continuation_prefix = "##";
  const LearnedMerges m = learn_merges({"a", "b", "##a", "##b"}, {{{0, 3, 2, 3}, 3}}, o);
  EXPECT_EQ(merge_texts(m), (std::vector<std::string>{"ab", "##ab", "abab"}));
}

// A pair whose text is already a symbol is never merged, so every merge makes a new symbol.
TEST(MergeLearner, NeverRemakesASymbol) {
  MergeLearnerOptions o;
  o.max_symbols = 100;
  o.min_count = 1;
  const LearnedMerges m = learn_merges({"a", "b", "ab", "c"}, {{{0, 1, 3}, 5}}, o);
  EXPECT_EQ(merge_texts(m), (std::vector<std::string>{"bc", "abc"}));
}

TrainedTokenizer train_on(const std::string& text, const std::string& kind, int64_t size) {
  TokenizerTrainingOptions o;
  o.kind = kind;
  o.vocab_size = size;
  return train_tokenizer_file({text}, o);
}

// The byte-level file: GPT-2's layout (ByteLevel pre-tokenizer and decoder), the special token
// at id 0 and in added_tokens, the 256 byte symbols next, and each merge joining two tokens that
// exist before it into the token with the next id.
TEST(TokenizerTraining, ByteLevelTokenizerJsonHasHuggingFacesLayout) {
  const std::string text = read_file(kShakespeare);
  const TrainedTokenizer t = train_on(text, "bpe", 600);
  EXPECT_EQ(t.vocab_size, 600);
  EXPECT_EQ(t.merges, 600 - 257);
  const auto j = nlohmann::json::parse(t.file_text);
  EXPECT_EQ(j["pre_tokenizer"]["type"], "ByteLevel");
  EXPECT_EQ(j["pre_tokenizer"]["use_regex"], true);
  EXPECT_EQ(j["decoder"]["type"], "ByteLevel");
  EXPECT_EQ(j["model"]["type"], "BPE");
  ASSERT_EQ(j["added_tokens"].size(), 1u);
  EXPECT_EQ(j["added_tokens"][0]["content"], "<|endoftext|>");
  EXPECT_EQ(j["added_tokens"][0]["special"], true);
  const auto& vocab = j["model"]["vocab"];
  ASSERT_EQ(vocab.size(), 600u);
  EXPECT_EQ(vocab["<|endoftext|>"], 0);
  // The byte symbols in code point order, as GPT-2's own ids are, one place later: "!" is
  // GPT-2's 0, and the space (written U+0120) its 220.
  EXPECT_EQ(vocab["!"], 1);
  EXPECT_EQ(vocab["\xC4\xA0"], 1 + 220);
  const auto& merges = j["model"]["merges"];
  ASSERT_EQ(merges.size(), 600u - 257u);
  for (size_t r = 0; r < merges.size(); ++r) {
    const std::string m = merges[r];
    const size_t space = m.find(' ');
    ASSERT_NE(space, std::string::npos) << m;
    const std::string left = m.substr(0, space), right = m.substr(space + 1);
    ASSERT_TRUE(vocab.contains(left) && vocab.contains(right) && vocab.contains(left + right)) << m;
    EXPECT_EQ(vocab[left + right], 257 + static_cast<int64_t>(r)) << m;
    EXPECT_LT(vocab[left].get<int64_t>(), 257 + static_cast<int64_t>(r));
    EXPECT_LT(vocab[right].get<int64_t>(), 257 + static_cast<int64_t>(r));
  }
  // The most frequent pair of English text pre-tokenised as GPT-2 does: a space before a letter
  // ("Ġt" as in " the", " to", " thou").
  EXPECT_EQ(merges[0].get<std::string>().substr(0, 2), "\xC4\xA0");
}

TEST(TokenizerTraining, IsDeterministic) {
  const std::string text = read_file(kShakespeare).substr(0, 200'000);
  EXPECT_EQ(train_on(text, "bpe", 400).file_text, train_on(text, "bpe", 400).file_text);
  EXPECT_EQ(train_on(text, "wordpiece", 400).file_text, train_on(text, "wordpiece", 400).file_text);
}

// The WordPiece vocab.txt: BERT's specials first, hwt's WordPiece reader takes it, and words of
// the corpus come out as pieces with no [UNK] (every character is in the alphabet, alone and
// with "##").
TEST(TokenizerTraining, WordPieceVocabularyServesHwtsReader) {
  const std::string text = read_file(kShakespeare);
  const TrainedTokenizer t = train_on(text, "wordpiece", 2000);
  EXPECT_EQ(t.vocab_size, 2000);
  const std::vector<std::string_view> lines = split_lines(t.file_text);
  ASSERT_EQ(lines.size(), 2000u);
  EXPECT_EQ(std::vector<std::string_view>(lines.begin(), lines.begin() + 5),
            (std::vector<std::string_view>{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}));
  const WordPieceTokenizer wp(t.file_text, "trained vocab.txt", /*lowercase=*/true);
  EXPECT_EQ(wp.pad_id(), 0);
  EXPECT_EQ(wp.unk_id(), 1);
  EXPECT_EQ(wp.cls_id(), 2);
  EXPECT_EQ(wp.sep_id(), 3);
  const std::string sample = text.substr(10'000, 20'000);
  const std::vector<int32_t> ids = wp.encode(sample);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), wp.unk_id()), 0);
  // Learned pieces make common words whole: far fewer pieces than characters.
  EXPECT_LT(ids.size() * 3, sample.size());
  EXPECT_EQ(wp.decode(wp.encode("First Citizen: Before we proceed")),
            "first citizen : before we proceed");
}

// The ids Hugging Face's own tokenizer.json reader (tokenizers.js under node, the oracle of
// tests/hf_tokenizer_test.cpp) gives for each line of the multi-script fixture text.
std::vector<std::vector<int32_t>> reference_ids(const std::string& package_dir,
                                                const std::string& tokenizer_json,
                                                const test::TempDir& dir) {
  const std::string texts = std::string(HWT_TEST_DIR) + "/fixtures/hf_tokenizer/texts.txt";
  const std::string out = dir / "reference.jsonl";
  const std::string cmd = "node " + std::string(HWT_TEST_DIR) + "/oracle/hf_encode.mjs " +
                          package_dir + " " + tokenizer_json + " " + texts + " >" + out;
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::vector<std::vector<int32_t>> ids;
  const std::string text = test::slurp(out);  // named: the lines are views into it
  for (std::string_view line : split_lines(text))
    if (!line.empty()) ids.push_back(nlohmann::json::parse(line).at("ids"));
  return ids;
}

// What `hwt tokenizer train` writes, read by Hugging Face's reader, gives hwt's ids: the
// byte-level tokenizer.json as it is (read by hwt's data.tokenizer = "hf"), the WordPiece
// vocab.txt inside the tokenizer.json of an uncased BERT (read by hwt's WordPiece). Both learned
// from Shakespeare and run on text in many scripts, so unknown characters are tried too.
TEST(TokenizerTraining, TrainedFilesGiveTheIdsOfHuggingFacesReader) {
  const auto package = find_shipped_file("data/node_modules/@huggingface/tokenizers/package.json");
  if (!package || std::system("command -v node >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "skipped: needs node and the npm package @huggingface/tokenizers "
                    "(scripts/setup.sh)";
  const std::string package_dir = std::filesystem::path(*package).parent_path().string();
  const test::TempDir dir("trained_vs_reference");
  const std::string corpus = read_file(kShakespeare);
  const std::string texts =
      test::slurp(std::string(HWT_TEST_DIR) + "/fixtures/hf_tokenizer/texts.txt");
  const std::vector<std::string_view> lines = split_lines(texts);

  const std::string bpe_path = dir / "bpe.json";
  write_file_atomic(bpe_path, train_on(corpus, "bpe", 2000).file_text);
  const auto bpe = HfTokenizer::load(bpe_path, /*special_in_text=*/true);
  const auto bpe_reference = reference_ids(package_dir, bpe_path, dir);
  ASSERT_EQ(bpe_reference.size(), lines.size() + 1);  // each line, then the whole text
  for (size_t i = 0; i < lines.size(); ++i)
    EXPECT_EQ(bpe->encode(lines[i]), bpe_reference[i]) << "bpe, line " << i << ": " << lines[i];
  EXPECT_EQ(bpe->encode(texts), bpe_reference.back());

  // BERT's tokenizer.json around the vocabulary; its specials are not added tokens, so "[CLS]"
  // in text is the pieces of "[", "cls" and "]" for both, as hwt's WordPiece reads text.
  const std::string vocab_txt = train_on(corpus, "wordpiece", 2000).file_text;
  nlohmann::json vocab = nlohmann::json::object();
  const std::vector<std::string_view> tokens = split_lines(vocab_txt);
  for (size_t id = 0; id < tokens.size(); ++id) vocab[std::string(tokens[id])] = id;
  const nlohmann::json bert = {
      {"version", "1.0"},
      {"added_tokens", nlohmann::json::array()},
      {"normalizer",
       {{"type", "BertNormalizer"},
        {"clean_text", true},
        {"handle_chinese_chars", true},
        {"strip_accents", nullptr},
        {"lowercase", true}}},
      {"pre_tokenizer", {{"type", "BertPreTokenizer"}}},
      {"post_processor", nullptr},
      {"decoder", {{"type", "WordPiece"}, {"prefix", "##"}, {"cleanup", true}}},
      {"model",
       {{"type", "WordPiece"},
        {"unk_token", "[UNK]"},
        {"continuing_subword_prefix", "##"},
        {"max_input_chars_per_word", 100},
        {"vocab", vocab}}}};
  const std::string wordpiece_path = dir / "wordpiece.json";
  write_file_atomic(wordpiece_path, bert.dump());
  const WordPieceTokenizer wordpiece(vocab_txt, "trained vocab.txt", /*lowercase=*/true);
  const auto wordpiece_reference = reference_ids(package_dir, wordpiece_path, dir);
  ASSERT_EQ(wordpiece_reference.size(), lines.size() + 1);
  for (size_t i = 0; i < lines.size(); ++i)
    EXPECT_EQ(wordpiece.encode(lines[i]), wordpiece_reference[i])
        << "wordpiece, line " << i << ": " << lines[i];
}

TEST(TokenizerTraining, RejectsWhatCannotBeLearned) {
  TokenizerTrainingOptions o;
  o.kind = "bpe";
  o.vocab_size = 200;  // below 1 special + 256 bytes
  EXPECT_THROW(train_tokenizer_file({"some text"}, o), InputError);
  o.vocab_size = 300;
  EXPECT_THROW(train_tokenizer_file({""}, o), InputError);
  o.kind = "unigram";
  EXPECT_THROW(train_tokenizer_file({"some text"}, o), InputError);
  o.kind = "wordpiece";
  o.special_tokens = {"[PAD]", "[CLS]", "[SEP]"};  // no [UNK]
  EXPECT_THROW(train_tokenizer_file({"some text"}, o), InputError);
  o.special_tokens = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[PAD]"};
  EXPECT_THROW(train_tokenizer_file({"some text"}, o), InputError);
}

TEST(TokenizerTrainingCli, WritesTheFileAndReportsBadInput) {
  const test::TempDir dir("tokenizer_train_cli");
  dir.write("corpus.txt", read_file(kShakespeare).substr(0, 100'000));
  const std::string corpus = dir / "corpus.txt";

  test::CliResult r = test::run_hwt(
      "tokenizer train --kind bpe --size 300 --quiet --special-tokens '<|endoftext|> <|pad|>' "
      "--out " +
          dir / "tokenizer.json" + " " + corpus,
      dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("300 tokens"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "");  // --quiet
  const auto vocab = nlohmann::json::parse(test::slurp(dir / "tokenizer.json"))["model"]["vocab"];
  EXPECT_EQ(vocab.size(), 300u);
  EXPECT_EQ(vocab["<|pad|>"], 1);

  r = test::run_hwt(
      "tokenizer train --kind wordpiece --size 400 --out " + dir / "vocab.txt" + " " + corpus, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Progress is drawn on a terminal only; stderr here is a file, as in a log.
  EXPECT_EQ(r.err, "") << "progress output in a log: " << r.err;
  EXPECT_EQ(split_lines(test::slurp(dir / "vocab.txt")).size(), 400u);

  const std::pair<std::string, std::string> bad[] = {
      {"--kind bpe --size 100", "vocabulary size 100"},
      {"--kind sentencepiece --size 1000", "unknown tokenizer kind 'sentencepiece'"},
      {"--kind bpe --size 1000 --cased", "--cased needs --kind wordpiece"},
      {"--kind wordpiece --size 1000 --special-tokens '[PAD] [CLS] [SEP]'", "[UNK]"},
  };
  for (const auto& [args, message] : bad) {
    r = test::run_hwt("tokenizer train " + args + " --out " + dir / "bad.json" + " " + corpus, dir);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_NE(r.err.find(message), std::string::npos) << args << ": " << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir / "bad.json")) << args;
  }
  r = test::run_hwt("tokenizer train --kind bpe --size 1000 --out " + dir / "bad.json" + " " +
                        dir / "missing.txt",
                    dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("missing.txt"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace hwt
