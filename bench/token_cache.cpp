// Time to data-ready for an LM config: load_dataset with the token cache off (encoding in
// memory at every start, the baseline), cold (building the cache entry) and warm (mapping it),
// for each thread count given. With data.format=sotu it also times the parallel loop alone on
// the addresses with a char tokenizer, which (unlike GPT-2's, for now) encodes without a lock.
//   bench_token_cache [--config configs/sotu_gpt2_cpu.toml] [--threads 1,2] [--repeats 3]
// Prints one JSON line; every figure is the median of the repeats, in seconds.
#include <fmt/format.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "config/run_config.h"
#include "core/paths.h"
#include "data/char_tokenizer.h"
#include "data/dataset.h"
#include "data/lm_dataset.h"
#include "data/parallel_encode.h"

namespace {

double median_seconds(int repeats, const std::function<void()>& before,
                      const std::function<void()>& fn) {
  std::vector<double> s;
  for (int i = 0; i < repeats; ++i) {
    before();
    const auto start = std::chrono::steady_clock::now();
    fn();
    s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(s.begin(), s.end());
  return s[s.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  using namespace hwt;
  namespace fs = std::filesystem;
  CLI::App app{"Time to data-ready with and without the token cache", "bench_token_cache"};
  std::string config = "configs/sotu_gpt2_cpu.toml";
  std::vector<int64_t> thread_counts{1, 2};
  int repeats = 3;
  app.add_option("--config", config, "Run config with an LM data section")->capture_default_str();
  app.add_option("--threads", thread_counts, "Encoding threads to time")->delimiter(',');
  app.add_option("--repeats", repeats, "Timed runs per figure (median)")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  RunConfig cfg = load_run_config(resolve_named_file(config, "configs", "--config"), {});
  const fs::path cache = fs::temp_directory_path() / fmt::format("hwt_bench_tokens_{}", ::getpid());
  const auto load = [&](const std::string& cache_dir, int64_t threads) {
    DataConfig c = cfg.data;
    c.cache_dir = cache_dir;
    return load_dataset(c, cfg.model.head, {threads, nullptr});
  };
  const auto nothing = [] {};
  const auto empty_cache = [&] { fs::remove_all(cache); };

  const Dataset reference = load("off", 1);
  nlohmann::json out{{"config", config},
                     {"source", reference.source},
                     {"tokens", reference.train.stream.size() + reference.valid.stream.size() +
                                    reference.test.stream.size()}};
  bool same = true;
  for (const int64_t t : thread_counts) {
    const std::string key = fmt::format("threads_{}", t);
    out[key]["off_s"] = median_seconds(repeats, nothing, [&] { load("off", t); });
    out[key]["cold_s"] = median_seconds(repeats, empty_cache, [&] { load(cache.string(), t); });
    Dataset warm;
    out[key]["warm_s"] = median_seconds(repeats, nothing, [&] { warm = load(cache.string(), t); });
    same = same && warm.train.stream == reference.train.stream &&
           warm.valid.stream == reference.valid.stream && warm.test.stream == reference.test.stream;
  }
  fs::remove_all(cache);
  if (cfg.data.format == DataFormat::Sotu) {
    const std::vector<Document> docs = read_sotu(cfg.data);
    std::vector<std::string_view> texts;
    for (const Document& d : docs) texts.push_back(d.text);
    const auto chars = CharTokenizer::train(texts);
    const std::vector<int32_t> serial =
        encode_documents(*chars, texts, Tokenizer::kCls, 1).to_vector();
    for (const int64_t t : thread_counts) {
      TokenStream ids;
      out[fmt::format("threads_{}", t)]["char_encode_s"] = median_seconds(
          repeats, nothing, [&] { ids = encode_documents(*chars, texts, Tokenizer::kCls, t); });
      same = same && ids.to_vector() == serial;
    }
  }
  out["same_ids"] = same;
  fmt::print("{}\n", out.dump());
  return same ? 0 : 1;
}
