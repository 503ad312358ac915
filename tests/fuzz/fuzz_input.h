// What every fuzz target shares: the input as a file (most readers take a path), the input cut
// into several files, and the one kind of failure that is an answer rather than a finding.
#pragma once
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace hwt::fuzz {

// A folder of this process's own under $TMPDIR (fuzz jobs run side by side), made once and
// kept: a target rewrites the same few files on every input, and a crash leaves them there.
inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::filesystem::path d = std::filesystem::path(tmp && *tmp ? tmp : "/tmp") /
                              ("hwt_fuzz_" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

// Writes `bytes` to `name` inside scratch_dir() (sub-folders made) and returns the path.
inline std::string write_input(const std::string& name, std::string_view bytes) {
  const std::filesystem::path p = scratch_dir() / name;
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary | std::ios::trunc)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return p.string();
}

// The input cut at each kSeparator into exactly `n` parts (missing parts empty, extra
// separators kept in the last part), for readers of several files at once.
inline constexpr std::string_view kSeparator = "\n====\n";
inline std::vector<std::string_view> split_parts(std::string_view bytes, size_t n) {
  std::vector<std::string_view> parts;
  while (parts.size() + 1 < n) {
    const size_t at = bytes.find(kSeparator);
    if (at == std::string_view::npos) break;
    parts.push_back(bytes.substr(0, at));
    bytes.remove_prefix(at + kSeparator.size());
  }
  parts.push_back(bytes);
  parts.resize(n);
  return parts;
}

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Runs `f`; bad input answered with InputError (the CLI's one line and exit 2) is the expected
// outcome. Any other exception escapes, and libFuzzer reports it as a crash: the CLI would have
// printed "internal error".
template <class F>
void expect_input_errors(F&& f) {
  try {
    f();
  } catch (const InputError&) {
  }
}

}  // namespace hwt::fuzz
