#include "data/parallel_encode.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

namespace hwt {

std::vector<int32_t> encode_documents(const Tokenizer& tok,
                                      const std::vector<std::string_view>& docs, int32_t separator,
                                      int64_t threads,
                                      const std::function<void(const EncodeProgress&)>& report,
                                      double report_every_s) {
  if (threads <= 0) threads = std::max(1u, std::thread::hardware_concurrency());
  // Fewer documents than threads (a corpus that is one text): the documents one after another,
  // each split over every thread where the tokenizer can (Tokenizer::encode_parallel).
  const int within = std::ssize(docs) < threads ? static_cast<int>(threads) : 1;
  if (within > 1) threads = 1;
  const auto start = std::chrono::steady_clock::now();
  EncodeProgress progress;
  for (const std::string_view d : docs) progress.bytes_total += d.size();

  std::vector<std::vector<int32_t>> encoded(docs.size());
  std::atomic<size_t> next{0}, bytes_done{0}, tokens_done{0};
  std::mutex m;
  std::condition_variable finished;
  int64_t running = threads;
  std::exception_ptr error;
  const auto work = [&] {
    try {
      // Documents are taken one at a time, so a thread that drew short ones takes more.
      for (size_t i = next++; i < docs.size(); i = next++) {
        encoded[i] = within > 1 ? tok.encode_parallel(docs[i], within) : tok.encode(docs[i]);
        bytes_done += docs[i].size();
        tokens_done += encoded[i].size();
      }
    } catch (...) {
      const std::lock_guard lock(m);
      if (!error) error = std::current_exception();
      next = docs.size();  // the others stop after their current document
    }
    const std::lock_guard lock(m);
    if (--running == 0) finished.notify_all();
  };
  std::vector<std::thread> pool;
  for (int64_t t = 0; t < threads; ++t) pool.emplace_back(work);
  {
    std::unique_lock lock(m);
    const auto every = std::chrono::duration<double>(report_every_s);
    while (!finished.wait_for(lock, every, [&] { return running == 0; }))
      if (report) {
        progress.bytes_done = bytes_done;
        progress.tokens_done = tokens_done;
        progress.seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        report(progress);
      }
  }
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);

  if (encoded.size() == 1) return std::move(encoded[0]);  // one document: no join, no copy
  const size_t total = tokens_done + (separator >= 0 && !docs.empty() ? docs.size() - 1 : 0);
  std::vector<int32_t> ids;
  ids.reserve(total);
  for (std::vector<int32_t>& e : encoded) {
    if (separator >= 0 && !ids.empty()) ids.push_back(separator);
    ids.insert(ids.end(), e.begin(), e.end());
    std::vector<int32_t>().swap(e);  // free as we go: the corpus is held once, not twice
  }
  return ids;
}

}  // namespace hwt
