// GPT-2 tokenizer throughput on one core: MB of text per second, encode (cold: empty piece
// cache, then warm) and decode, and the share of the regex pre-tokenisation alone.
//   bench_tokenizer_gpt2 [--file data/tinyshakespeare/input.txt] [--repeats 5]
// Prints one JSON line; every figure is the median of the repeats.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

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
  CLI::App app{"GPT-2 tokenizer throughput on one core", "bench_tokenizer_gpt2"};
  std::string file = "data/tinyshakespeare/input.txt";
  int repeats = 5;
  app.add_option("--file", file, "Text to encode")->capture_default_str();
  app.add_option("--repeats", repeats, "Timed runs per figure (median)")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  const std::string text = read_text_file(find_shipped_file(file).value_or(file));
  const double mb = static_cast<double>(text.size()) / 1e6;

  std::unique_ptr<Gpt2Tokenizer> tok;
  const double load_s = seconds([&] { tok = Gpt2Tokenizer::load_installed(false); });
  std::vector<int32_t> ids;
  // Each cold run gets a fresh tokenizer (an empty cache); loading it is not timed.
  std::vector<double> cold;
  for (int i = 0; i < repeats; ++i) {
    auto fresh = Gpt2Tokenizer::load_installed(false);
    cold.push_back(seconds([&] { ids = fresh->encode(text); }));
  }
  std::sort(cold.begin(), cold.end());
  const double warm_s = median_seconds(repeats, [&] { ids = tok->encode(text); });
  std::string decoded;
  const double decode_s = median_seconds(repeats, [&] { decoded = tok->decode(ids); });
  if (decoded != text) fmt::print(stderr, "bench: decode(encode(text)) differs from the text\n");
  const Gpt2Pretokenizer pre;
  size_t pieces = 0;
  const double regex_s = median_seconds(repeats, [&] {
    pieces = 0;
    Gpt2Pretokenizer::Cursor cursor(pre, text);
    for (std::string_view piece; cursor.next(piece);) ++pieces;
  });
  fmt::print("{}\n", nlohmann::json{{"file", file},
                                    {"bytes", text.size()},
                                    {"tokens", ids.size()},
                                    {"pieces", pieces},
                                    {"load_s", load_s},
                                    {"encode_cold_mb_s", mb / cold[cold.size() / 2]},
                                    {"encode_warm_mb_s", mb / warm_s},
                                    {"regex_only_mb_s", mb / regex_s},
                                    {"decode_mb_s", mb / decode_s}}
                         .dump());
  return decoded == text ? 0 : 1;
}
