// Headless Chromium for the tests that look at what hwt draws (tests/report_test.cpp, the
// chart screenshots of tests/svg_layout_check.h); scripts/setup.sh installs it.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

namespace hwt::test {

inline bool have_chromium() {
  return std::system("command -v chromium >/dev/null 2>&1") == 0;
}

// The command's start; the test adds what to do (--screenshot=, --dump-dom) and the file://.
inline const std::string kHeadlessChromium =
    "timeout 120 chromium --headless=new --no-sandbox --disable-gpu --hide-scrollbars ";

// Where screenshot FILE goes: docs/img/FILE with HWT_UPDATE_SCREENSHOTS=1 (the committed
// screenshots), else dir/FILE.
inline std::filesystem::path screenshot_path(const std::string& file,
                                             const std::filesystem::path& dir) {
  const char* update = std::getenv("HWT_UPDATE_SCREENSHOTS");
  if (update && std::string(update) == "1")
    return std::filesystem::path(HWT_TEST_DIR) / ".." / "docs" / "img" / file;
  return dir / file;
}

}  // namespace hwt::test
