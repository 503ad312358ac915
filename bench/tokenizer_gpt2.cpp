// GPT-2 tokenizer throughput: MB of text per second, encode on one core (cold: empty piece
// cache, then warm) and on N threads (encode_parallel, warm), decode, and the pre-tokenisation
// alone (the ASCII scanner with PCRE2 for the rest, and PCRE2 alone).
//   bench_tokenizer_gpt2 [--file data/tinyshakespeare/input.txt] [--repeats 5] [--threads 2]
//                        [--ids-out FILE]
// Every figure is the wall time of the whole text, median of the repeats, after a warm-up run
// where warm; loading the vocabulary is not timed. Prints one JSON line. --ids-out writes the
// ids (little-endian int32) for bench/tokenizer_baselines.js to check its encoders against.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/files.h"
#include "core/paths.h"
#include "data/gpt2_pretokenizer.h"
#include "data/gpt2_tokenizer.h"
#include "data/text_io.h"

namespace {

double seconds(const std::function<void()>& fn) {
  const auto start = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double median_seconds(int repeats, const std::function<void()>& fn) {
  std::vector<double> s;
  for (int i = 0; i < repeats; ++i) s.push_back(seconds(fn));
  std::sort(s.begin(), s.end());
  return s[s.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  using namespace hwt;
  CLI::App app{"GPT-2 tokenizer throughput", "bench_tokenizer_gpt2"};
  std::string file = "data/tinyshakespeare/input.txt";
  std::string ids_out;
  int repeats = 5;
  int threads = 2;
  app.add_option("--file", file, "Text to encode")->capture_default_str();
  app.add_option("--repeats", repeats, "Timed runs per figure (median)")->capture_default_str();
  app.add_option("--threads", threads, "Threads of the parallel encode")->capture_default_str();
  app.add_option("--ids-out", ids_out, "Write the ids here (little-endian int32)");
  CLI11_PARSE(app, argc, argv);
  const std::string text = read_text_file(find_shipped_file(file).value_or(file));
  const double mb = static_cast<double>(text.size()) / 1e6;

  std::unique_ptr<Gpt2Tokenizer> tok;
  const double load_s = seconds([&] { tok = Gpt2Tokenizer::load_installed(false); });
  std::vector<int32_t> ids;
  // Each cold run gets a fresh tokenizer (empty caches); loading it is not timed.
  std::vector<double> cold;
  for (int i = 0; i < repeats; ++i) {
    auto fresh = Gpt2Tokenizer::load_installed(false);
    cold.push_back(seconds([&] { ids = fresh->encode(text); }));
  }
  std::sort(cold.begin(), cold.end());
  ids = tok->encode(text);  // warm-up
  const double warm_s = median_seconds(repeats, [&] { ids = tok->encode(text); });
  std::vector<int32_t> parallel_ids = tok->encode_parallel(text, threads);  // warm-up
  const double parallel_s =
      median_seconds(repeats, [&] { parallel_ids = tok->encode_parallel(text, threads); });
  std::string decoded;
  const double decode_s = median_seconds(repeats, [&] { decoded = tok->decode(ids); });
  const bool ok = decoded == text && parallel_ids == ids;
  if (decoded != text) fmt::print(stderr, "bench: decode(encode(text)) differs from the text\n");
  if (parallel_ids != ids) fmt::print(stderr, "bench: encode_parallel differs from encode\n");
  const Gpt2Pretokenizer pre;
  size_t pieces = 0;
  const auto pretokenize_s = [&](Gpt2Pretokenizer::Matcher matcher) {
    return median_seconds(repeats, [&] {
      pieces = 0;
      Gpt2Pretokenizer::Cursor cursor(pre, text, matcher);
      for (std::string_view piece; cursor.next(piece);) ++pieces;
    });
  };
  const double regex_s = pretokenize_s(Gpt2Pretokenizer::Matcher::kRegexOnly);
  const double scanner_s = pretokenize_s(Gpt2Pretokenizer::Matcher::kAsciiScanner);
  if (!ids_out.empty())
    write_file_atomic(ids_out, std::string_view(reinterpret_cast<const char*>(ids.data()),
                                                ids.size() * sizeof(int32_t)));
  fmt::print("{}\n", nlohmann::json{{"file", file},
                                    {"bytes", text.size()},
                                    {"tokens", ids.size()},
                                    {"pieces", pieces},
                                    {"load_s", load_s},
                                    {"encode_cold_mb_s", mb / cold[cold.size() / 2]},
                                    {"encode_warm_mb_s", mb / warm_s},
                                    {"threads", threads},
                                    {"encode_parallel_warm_mb_s", mb / parallel_s},
                                    {"pretokenize_mb_s", mb / scanner_s},
                                    {"regex_only_mb_s", mb / regex_s},
                                    {"decode_mb_s", mb / decode_s}}
                         .dump());
  return ok ? 0 : 1;
}
