// Folders depend one way: every #include under src/ must name a folder of a lower layer (or its
// own folder), as the layer table in docs/architecture.md lists them. A folder missing from the
// table, or an include that points up or sideways, fails with the file and line.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

namespace hwt {
namespace {

namespace fs = std::filesystem;

const fs::path kSource = HWT_SOURCE_DIR;

// "| 2 | `backend`, `data`, `hw` | ..." rows of the table: folder -> layer.
std::map<std::string, int> layer_table() {
  std::ifstream in(kSource / "docs" / "architecture.md");
  const std::regex row(R"(^\| *(\d+) *\| *((?:`[a-z_/]+`(?:, *)?)+) *\|)");
  const std::regex folder("`([a-z_/]+)`");
  std::map<std::string, int> layers;
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (!std::regex_search(line, m, row)) continue;
    const int layer = std::stoi(m[1]);
    const std::string folders = m[2];
    for (std::sregex_iterator it(folders.begin(), folders.end(), folder), end; it != end; ++it)
      layers[(*it)[1]] = layer;
  }
  return layers;
}

// The deepest folder of the table that holds `dir` ("backend/cuda" for "backend/cuda").
std::string owner(const std::map<std::string, int>& layers, std::string dir) {
  for (;;) {
    if (layers.count(dir)) return dir;
    const size_t slash = dir.rfind('/');
    if (slash == std::string::npos) return "";
    dir.resize(slash);
  }
}

TEST(Layering, EveryIncludePointsDown) {
  const std::map<std::string, int> layers = layer_table();
  ASSERT_GE(layers.size(), 10u) << "no layer table found in docs/architecture.md";
  const std::regex include(R"(^\s*#\s*include\s+"([^"]+)\")");
  int files = 0;
  for (const auto& e : fs::recursive_directory_iterator(kSource / "src")) {
    const std::string ext = e.path().extension().string();
    if (!e.is_regular_file() || (ext != ".h" && ext != ".cpp" && ext != ".cu" && ext != ".cuh"))
      continue;
    ++files;
    const std::string rel = fs::relative(e.path(), kSource / "src").string();
    const std::string from = owner(layers, fs::path(rel).parent_path().string());
    ASSERT_FALSE(from.empty()) << rel << ": its folder is not in the layer table";
    std::ifstream in(e.path());
    int line_no = 0;
    for (std::string line; std::getline(in, line);) {
      ++line_no;
      std::smatch m;
      if (!std::regex_search(line, m, include)) continue;
      const std::string target = m[1];
      if (target.find('/') == std::string::npos) continue;  // a file beside it
      const std::string to = owner(layers, fs::path(target).parent_path().string());
      EXPECT_FALSE(to.empty()) << rel << ":" << line_no << ": " << target
                               << " is in no folder of the layer table";
      if (to.empty() || to == from) continue;
      EXPECT_LT(layers.at(to), layers.at(from))
          << rel << ":" << line_no << ": " << from << " (layer " << layers.at(from) << ") includes "
          << target << " (" << to << ", layer " << layers.at(to) << ")";
    }
  }
  EXPECT_GT(files, 100);
}

}  // namespace
}  // namespace hwt
