// GPT-2's pre-tokenisation: the ASCII scanner against PCRE2 alone (exhaustively on short strings,
// on random and on real text), the cut points the parallel encoder splits at, and the piece
// cache and its pool.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <thread>

#include "core/paths.h"
#include "data/gpt2_pretokenizer.h"
#include "data/piece_cache.h"
#include "data/text_io.h"

namespace hwt {
namespace {

using Matcher = Gpt2Pretokenizer::Matcher;

const Gpt2Pretokenizer& pretokenizer() {
  static const Gpt2Pretokenizer p;
  return p;
}

std::vector<std::string_view> pieces(std::string_view text, Matcher matcher) {
  std::vector<std::string_view> out;
  Gpt2Pretokenizer::Cursor cursor(pretokenizer(), text, matcher);
  for (std::string_view piece; cursor.next(piece);) out.push_back(piece);
  return out;
}

// The scanner's pieces are the regex's, byte for byte.
void expect_scanner_matches_regex(std::string_view text) {
  ASSERT_EQ(pieces(text, Matcher::kAsciiScanner), pieces(text, Matcher::kRegexOnly))
      << "text (" << text.size() << " bytes): \"" << text << "\"";
}

// Fragments around the regex's edges: each class, contractions and their look-alikes, ASCII
// controls, non-ASCII letters, digits, spaces and symbols, and invalid UTF-8.
const std::vector<std::string> kFragments = {
    "a",
    "Z",
    "7",
    " ",
    "\n",
    "\t",
    "\r",
    "\x0b",
    "\x0c",
    "'",
    "s",
    "re",
    "ll",
    "!",
    "\x1f",
    std::string(1, '\0'),
    "\xC3\xA9",      // é, a letter
    "\xD9\xA3",      // Arabic-Indic digit three, a number
    "\xC2\xA0",      // no-break space, whitespace
    "\xE2\x80\x94",  // em dash, other
    "\xCC\x81",      // combining acute accent, a mark (not a letter)
    "\xFF",          // never valid in UTF-8
    "\xC3",          // a lead byte without its continuation
    "\x80"};         // a lone continuation byte

TEST(Gpt2Pretokenizer, ScannerGivesTheRegexsPiecesOnEveryShortString) {
  // Every string of up to 4 fragments.
  std::vector<std::string> level = {""};
  for (int len = 1; len <= 4; ++len) {
    std::vector<std::string> longer;
    for (const std::string& s : level)
      for (const std::string& f : kFragments) longer.push_back(s + f);
    for (const std::string& s : longer) expect_scanner_matches_regex(s);
    level = std::move(longer);
  }
}

TEST(Gpt2Pretokenizer, ScannerGivesTheRegexsPiecesForEveryAsciiByteInEveryPair) {
  std::vector<std::string> units;
  for (int b = 0; b < 128; ++b) units.emplace_back(1, static_cast<char>(b));
  units.insert(units.end(), kFragments.begin(), kFragments.end());
  for (const std::string& a : units)
    for (const std::string& b : units) {
      expect_scanner_matches_regex(a + b);
      expect_scanner_matches_regex(" " + a + b + " ");
    }
}

TEST(Gpt2Pretokenizer, ScannerGivesTheRegexsPiecesOnRandomText) {
  std::mt19937_64 rng(29);
  for (int round = 0; round < 3000; ++round) {
    std::string text;
    const size_t len = rng() % 300;
    for (size_t i = 0; i < len; ++i) {
      if (rng() % 2 == 0)
        text += kFragments[rng() % kFragments.size()];
      else
        text += static_cast<char>(rng() % (round % 2 == 0 ? 128 : 256));
    }
    expect_scanner_matches_regex(text);
  }
}

std::vector<std::string> real_texts() {
  std::vector<std::string> texts;
  for (const char* f : {"data/tinyshakespeare/input.txt", "tests/fixtures/gpt2/mixed_text.txt"})
    if (const auto path = find_shipped_file(f)) texts.push_back(read_text_file(*path));
  return texts;
}

TEST(Gpt2Pretokenizer, ScannerGivesTheRegexsPiecesOnRealText) {
  const std::vector<std::string> texts = real_texts();
  if (texts.empty()) GTEST_SKIP() << "skipped: no real text installed";
  for (const std::string& text : texts) expect_scanner_matches_regex(text);
}

// Cutting the text at any cut point and cutting each side into pieces gives the whole text's
// pieces.
void expect_cuts_keep_the_pieces(std::string_view text) {
  const std::vector<std::string_view> whole = pieces(text, Matcher::kRegexOnly);
  for (size_t cut = Gpt2Pretokenizer::next_cut(text, 0); cut < text.size();
       cut = Gpt2Pretokenizer::next_cut(text, cut + 1)) {
    ASSERT_GT(cut, 0u);
    std::vector<std::string_view> joined = pieces(text.substr(0, cut), Matcher::kRegexOnly);
    const std::vector<std::string_view> after = pieces(text.substr(cut), Matcher::kRegexOnly);
    joined.insert(joined.end(), after.begin(), after.end());
    // Views into different subjects: compare the bytes and the boundaries.
    ASSERT_EQ(std::vector<std::string>(joined.begin(), joined.end()),
              std::vector<std::string>(whole.begin(), whole.end()))
        << "cut at " << cut << " of \"" << text << "\"";
  }
}

TEST(Gpt2Pretokenizer, CutsNeverChangeThePiecesOfAdversarialText) {
  std::vector<std::string> level = {""};
  for (int len = 1; len <= 3; ++len) {
    std::vector<std::string> longer;
    for (const std::string& s : level)
      for (const std::string& f : kFragments) longer.push_back(s + f);
    for (const std::string& s : longer) expect_cuts_keep_the_pieces(s);
    level = std::move(longer);
  }
  std::mt19937_64 rng(7);
  for (int round = 0; round < 500; ++round) {
    std::string text;
    const size_t len = rng() % 200;
    for (size_t i = 0; i < len; ++i) text += kFragments[rng() % kFragments.size()];
    expect_cuts_keep_the_pieces(text);
  }
}

TEST(Gpt2Pretokenizer, CutsFallBeforeASpaceThatFollowsANonSpace) {
  EXPECT_EQ(Gpt2Pretokenizer::next_cut("ab cd", 0), 2u);
  EXPECT_EQ(Gpt2Pretokenizer::next_cut("ab cd", 3), 5u);       // none after: the end
  EXPECT_EQ(Gpt2Pretokenizer::next_cut("a  \n\nb\n", 2), 6u);  // not inside a run of spaces
  EXPECT_EQ(Gpt2Pretokenizer::next_cut(" \n", 0), 2u);
  EXPECT_EQ(Gpt2Pretokenizer::next_cut("\xC3\xA9 x", 0), 4u);  // not after a non-ASCII byte
}

TEST(PieceCache, ReturnsWhatWasAddedAndGrowsAndEmptiesWhenFull) {
  PieceCache cache;
  std::vector<int32_t> out;
  EXPECT_FALSE(cache.append("hello", out));
  const std::vector<int32_t> two = {7, 8};
  cache.add("hello", two.data(), two.size());
  cache.add(" a", two.data(), 1);
  ASSERT_TRUE(cache.append("hello", out));
  ASSERT_TRUE(cache.append(" a", out));
  EXPECT_EQ(out, (std::vector<int32_t>{7, 8, 7}));
  EXPECT_FALSE(cache.append("hell", out));
  const std::string long_piece(PieceCache::kMaxPieceBytes + 1, 'x');
  cache.add(long_piece, two.data(), 1);
  EXPECT_FALSE(cache.append(long_piece, out));

  // Past many growths every piece still finds its ids; at kMaxPieces it starts over.
  for (int32_t i = 0; static_cast<size_t>(cache.size()) < PieceCache::kMaxPieces; ++i) {
    const std::string key = std::to_string(i);
    cache.add(key, &i, 1);
  }
  out.clear();
  ASSERT_TRUE(cache.append("123456", out));
  EXPECT_EQ(out, (std::vector<int32_t>{123456}));
  cache.add("new", two.data(), 2);
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_FALSE(cache.append("123456", out));
  EXPECT_TRUE(cache.append("new", out));
}

TEST(PieceCache, TellsApartPiecesThatDifferInOneByteAtAnyLength) {
  // Short pieces are compared as two packed words, longer ones byte by byte: every length on
  // both sides of each packing, every position changed.
  PieceCache cache;
  int32_t next_id = 0;
  std::vector<std::pair<std::string, int32_t>> added;
  for (size_t n = 1; n <= 40; ++n) {
    const std::string base(n, 'a');
    for (size_t at = 0; at <= n; ++at) {
      std::string piece = base;
      if (at < n) piece[at] = 'b';  // at == n: the base itself
      cache.add(piece, &next_id, 1);
      added.emplace_back(piece, next_id++);
    }
  }
  for (const auto& [piece, id] : added) {
    std::vector<int32_t> out;
    ASSERT_TRUE(cache.append(piece, out)) << piece;
    EXPECT_EQ(out, std::vector<int32_t>{id}) << piece;
  }
}

TEST(PieceCachePool, ConcurrentLeasesGetDistinctCachesAndReuseThem) {
  const PieceCachePool pool;
  std::set<PieceCache*> seen;
  {
    const PieceCachePool::Lease a = pool.lease();
    const PieceCachePool::Lease b = pool.lease();
    EXPECT_NE(&a.cache(), &b.cache());
    seen = {&a.cache(), &b.cache()};
    const int32_t id = 5;
    a.cache().add("x", &id, 1);
  }
  const PieceCachePool::Lease again = pool.lease();
  EXPECT_TRUE(seen.contains(&again.cache())) << "a cache given back is reused";
}

}  // namespace
}  // namespace hwt
