#include "data/parallel_encode.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

#include "core/integer_math.h"

namespace hwt {
namespace {

// Parts per thread: threads take parts in turn, so one whose parts encode faster takes more, and
// the last parts to finish, which leave the others idle, are small.
constexpr size_t kPartsPerThread = 16;

// Calls work(k) for every k < count on `threads` new threads, which take the k in turn; this
// thread waits, calling `report` about every `report_every_s` seconds. The first
// exception stops the others after their current k and is rethrown here.
template <class Work>
void on_threads(size_t count, int64_t threads, const Work& work,
                const std::function<void()>& report, double report_every_s) {
  std::atomic<size_t> next{0};
  std::mutex m;
  std::condition_variable finished;
  int64_t running = threads;
  std::exception_ptr error;
  const auto loop = [&] {
    try {
      for (size_t k = next++; k < count; k = next++) work(k);
    } catch (...) {
      const std::lock_guard lock(m);
      if (!error) error = std::current_exception();
      next = count;
    }
    const std::lock_guard lock(m);
    if (--running == 0) finished.notify_all();
  };
  std::vector<std::thread> pool;
  for (int64_t t = 0; t < threads; ++t) pool.emplace_back(loop);
  {
    std::unique_lock lock(m);
    const auto every = std::chrono::duration<double>(report_every_s);
    while (!finished.wait_for(lock, every, [&] { return running == 0; }))
      if (report) report();
  }
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

struct Part {
  size_t doc;
  std::string_view text;
};

// Each document cut into parts in proportion to its share of the bytes, about kPartsPerThread
// per thread in all, where its tokenizer can cut it (Tokenizer::independent_parts).
std::vector<Part> cut_into_parts(const Tokenizer& tok, const std::vector<std::string_view>& docs,
                                 int64_t threads, size_t bytes_total) {
  const size_t wanted = threads > 1 ? static_cast<size_t>(threads) * kPartsPerThread : 1;
  std::vector<Part> parts;
  for (size_t d = 0; d < docs.size(); ++d) {
    const size_t share = bytes_total ? ceil_div(docs[d].size() * wanted, bytes_total) : 1;
    for (const std::string_view p : tok.independent_parts(docs[d], std::max<size_t>(share, 1)))
      parts.push_back({d, p});
  }
  return parts;
}

}  // namespace

TokenStream encode_documents(const Tokenizer& tok, const std::vector<std::string_view>& docs,
                             int32_t separator, int64_t threads,
                             const std::function<void(const EncodeProgress&)>& report,
                             double report_every_s) {
  if (threads <= 0) threads = std::max(1u, std::thread::hardware_concurrency());
  const auto start = std::chrono::steady_clock::now();
  EncodeProgress progress;
  for (const std::string_view d : docs) progress.bytes_total += d.size();
  const std::vector<Part> parts = cut_into_parts(tok, docs, threads, progress.bytes_total);

  std::vector<std::vector<int32_t>> encoded(parts.size());
  std::atomic<size_t> bytes_done{0}, tokens_done{0};
  on_threads(
      parts.size(), std::min<int64_t>(threads, std::ssize(parts)),
      [&](size_t k) {
        encoded[k] = tok.encode(parts[k].text);
        bytes_done += parts[k].text.size();
        tokens_done += encoded[k].size();
      },
      [&] {
        if (!report) return;
        progress.bytes_done = bytes_done;
        progress.tokens_done = tokens_done;
        progress.seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        report(progress);
      },
      report_every_s);
  // Not joined: the stream reads the parts where they are. A separator goes after the last part
  // of the document before (documents with no ids add none, as when they are appended one by
  // one).
  size_t before = 0;
  for (size_t k = 0; k < parts.size(); ++k) {
    const bool ends_doc = k + 1 == parts.size() || parts[k + 1].doc != parts[k].doc;
    before += encoded[k].size();
    if (separator >= 0 && ends_doc && k + 1 < parts.size() && before > 0) {
      encoded[k].push_back(separator);
      ++before;
    }
  }
  return TokenStream(std::move(encoded));
}

}  // namespace hwt
