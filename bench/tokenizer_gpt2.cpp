// GPT-2 tokenizer throughput: MB of text per second, encode on one core (cold: empty piece
// cache, then warm) and on N threads (encode_documents of the one text, warm and cold), decode,
// and the pre-tokenisation alone (the ASCII scanner with PCRE2 for the rest, and PCRE2 alone).
//   bench_tokenizer_gpt2 [--file data/tinyshakespeare/input.txt] [--repeats 5] [--threads 2]
//                        [--ids-out FILE]
// Every figure is the wall time of the whole text, median of the repeats, after a warm-up run
// where warm; loading the vocabulary is not timed. The *_cpu_mb_s figures divide by the timing
// thread's CPU time instead (what one core gives when other jobs share the machine);
// encode_documents_cpu_mb_s by the CPU time of all its threads (equal to encode_warm_cpu_mb_s
// when splitting the work costs nothing extra). Prints one JSON line. --ids-out writes the
// ids (little-endian int32) for bench/tokenizer_baselines.js to check its encoders against.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/files.h"
#include "core/paths.h"
#include "data/gpt2_pretokenizer.h"
#include "data/gpt2_tokenizer.h"
#include "data/parallel_encode.h"
#include "data/text_io.h"

namespace {

double seconds(const std::function<void()>& fn) {
  const auto start = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

double median(std::vector<double> s) {
  std::sort(s.begin(), s.end());
  return s[s.size() / 2];
}

double process_cpu_seconds() {
  return static_cast<double>(std::clock()) / CLOCKS_PER_SEC;
}

// Medians of the wall time, of the calling thread's CPU time and of the process's (all threads).
struct Times {
  double wall_s, cpu_s, process_cpu_s;
};
Times median_times(int repeats, const std::function<void()>& fn) {
  std::vector<double> wall, cpu, process_cpu;
  for (int i = 0; i < repeats; ++i) {
    const double cpu_start = thread_cpu_seconds(), process_start = process_cpu_seconds();
    wall.push_back(seconds(fn));
    cpu.push_back(thread_cpu_seconds() - cpu_start);
    process_cpu.push_back(process_cpu_seconds() - process_start);
  }
  return {median(wall), median(cpu), median(process_cpu)};
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
  ids = tok->encode(text);  // warm-up
  const Times warm = median_times(repeats, [&] { ids = tok->encode(text); });
  const std::vector<std::string_view> docs{text};
  TokenStream parallel_ids = encode_documents(*tok, docs, -1, threads);  // warm-up
  const Times parallel =
      median_times(repeats, [&] { parallel_ids = encode_documents(*tok, docs, -1, threads); });
  // Cold: a fresh tokenizer per run, as when a corpus is encoded once into the token cache.
  std::vector<double> parallel_cold;
  for (int i = 0; i < repeats; ++i) {
    auto fresh = Gpt2Tokenizer::load_installed(false);
    parallel_cold.push_back(
        seconds([&] { parallel_ids = encode_documents(*fresh, docs, -1, threads); }));
  }
  std::string decoded;
  const Times decode = median_times(repeats, [&] { decoded = tok->decode(ids); });
  const bool same = parallel_ids.to_vector() == ids;
  const bool ok = decoded == text && same;
  if (decoded != text) fmt::print(stderr, "bench: decode(encode(text)) differs from the text\n");
  if (!same) fmt::print(stderr, "bench: encode_documents differs from encode\n");
  const Gpt2Pretokenizer pre;
  size_t pieces = 0;
  const auto pretokenize = [&](Gpt2Pretokenizer::Matcher matcher) {
    return median_times(repeats, [&] {
      pieces = 0;
      Gpt2Pretokenizer::Cursor cursor(pre, text, matcher);
      for (std::string_view piece; cursor.next(piece);) ++pieces;
    });
  };
  const Times regex = pretokenize(Gpt2Pretokenizer::Matcher::kRegexOnly);
  const Times scanner = pretokenize(Gpt2Pretokenizer::Matcher::kAsciiScanner);
  if (!ids_out.empty())
    write_file_atomic(ids_out, std::string_view(reinterpret_cast<const char*>(ids.data()),
                                                ids.size() * sizeof(int32_t)));
  fmt::print("{}\n", nlohmann::json{{"file", file},
                                    {"bytes", text.size()},
                                    {"tokens", ids.size()},
                                    {"pieces", pieces},
                                    {"load_s", load_s},
                                    {"encode_cold_mb_s", mb / median(cold)},
                                    {"encode_warm_mb_s", mb / warm.wall_s},
                                    {"encode_warm_cpu_mb_s", mb / warm.cpu_s},
                                    {"threads", threads},
                                    {"encode_documents_warm_mb_s", mb / parallel.wall_s},
                                    {"encode_documents_cpu_mb_s", mb / parallel.process_cpu_s},
                                    {"encode_documents_cold_mb_s", mb / median(parallel_cold)},
                                    {"pretokenize_mb_s", mb / scanner.wall_s},
                                    {"pretokenize_cpu_mb_s", mb / scanner.cpu_s},
                                    {"regex_only_mb_s", mb / regex.wall_s},
                                    {"regex_only_cpu_mb_s", mb / regex.cpu_s},
                                    {"decode_mb_s", mb / decode.wall_s}}
                         .dump());
  return ok ? 0 : 1;
}
