// BERT WordPiece tokenizer throughput on one core: MB of text per second, encode (uncased and
// cased), the basic tokenisation alone, and decode.
//   bench_tokenizer_wordpiece [--file data/tinyshakespeare/input.txt]
//                             [--vocab tests/fixtures/wordpiece/vocab.txt] [--repeats 5]
// Prints one JSON line; every figure is the median of the repeats, in the thread's CPU time.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <ctime>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/paths.h"
#include "data/bert_basic_tokenizer.h"
#include "data/text_io.h"
#include "data/wordpiece_tokenizer.h"

namespace {

// This thread's CPU time, so a busy machine (other processes on the core) does not count.
double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

double median_seconds(int repeats, const std::function<void()>& fn) {
  std::vector<double> s;
  for (int i = 0; i < repeats; ++i) {
    const double start = cpu_seconds();
    fn();
    s.push_back(cpu_seconds() - start);
  }
  std::sort(s.begin(), s.end());
  return s[s.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  using namespace hwt;
  CLI::App app{"BERT WordPiece tokenizer throughput on one core", "bench_tokenizer_wordpiece"};
  std::string file = "data/tinyshakespeare/input.txt";
  std::string vocab = "tests/fixtures/wordpiece/vocab.txt";
  int repeats = 5;
  app.add_option("--file", file, "Text to encode")->capture_default_str();
  app.add_option("--vocab", vocab, "BERT's vocab.txt")->capture_default_str();
  app.add_option("--repeats", repeats, "Timed runs per figure (median)")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  const std::string text = read_text_file(find_shipped_file(file).value_or(file));
  const double mb = static_cast<double>(text.size()) / 1e6;

  const auto uncased = WordPieceTokenizer::load(vocab, true);
  const auto cased = WordPieceTokenizer::load(vocab, false);
  std::vector<int32_t> ids, cased_ids;
  const double uncased_s = median_seconds(repeats, [&] { ids = uncased->encode(text); });
  const double cased_s = median_seconds(repeats, [&] { cased_ids = cased->encode(text); });
  size_t words = 0;
  const BertBasicTokenizer basic(true);
  const double basic_s = median_seconds(repeats, [&] {
    words = 0;
    BertBasicTokenizer::Cursor cursor(basic, text);
    std::string_view word;
    int64_t chars = 0;
    while (cursor.next(word, chars)) ++words;
  });
  std::string decoded;
  const double decode_s = median_seconds(repeats, [&] { decoded = uncased->decode(ids); });
  const auto unknown = std::count(ids.begin(), ids.end(), uncased->unk_id());
  fmt::print("{}\n", nlohmann::json{{"file", file},
                                    {"vocab", uncased->source()},
                                    {"vocab_size", uncased->vocab_size()},
                                    {"bytes", text.size()},
                                    {"words", words},
                                    {"tokens", ids.size()},
                                    {"unknown", unknown},
                                    {"encode_uncased_mb_s", mb / uncased_s},
                                    {"encode_cased_mb_s", mb / cased_s},
                                    {"basic_only_mb_s", mb / basic_s},
                                    {"decode_mb_s", mb / decode_s}}
                         .dump());
  return 0;
}
