// Running the hwt binary from tests, and small data fixtures written into temp folders.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "config/run_config.h"
#include "core/safetensors.h"

namespace hwt::test {

struct CliResult {
  int exit_code = -1;
  std::string out, err;
};

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A fresh empty folder under the system temp dir, removed when the object goes. The process id
// keeps it private: ctest runs each test in its own process, several at once.
class TempDir {
 public:
  explicit TempDir(const std::string& name)
      : path_(std::filesystem::temp_directory_path() /
              ("hwt_test_" + name + "_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }
  std::string operator/(const std::string& f) const { return (path_ / f).string(); }
  void write(const std::string& f, const std::string& contents) const {
    std::ofstream(path_ / f, std::ios::binary) << contents;
  }

 private:
  std::filesystem::path path_;
};

// Runs `<prefix>hwt <args>` (passed to the shell as written); the prefix may be a launcher
// such as mpirun.
inline CliResult run_hwt_with(const std::string& prefix, const std::string& args,
                              const TempDir& scratch) {
  const std::string out = scratch / ".stdout", err = scratch / ".stderr";
  const std::string cmd = prefix + std::string(HWT_BINARY) + " " + args + " >" + out + " 2>" + err;
  const int status = std::system(cmd.c_str());
  CliResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  std::filesystem::remove(out);
  std::filesystem::remove(err);
  return r;
}

inline CliResult run_hwt(const std::string& args, const TempDir& scratch) {
  return run_hwt_with("", args, scratch);
}

// Two safetensors files hold the same tensors under the same names, byte for byte.
inline void expect_same_tensors(const std::filesystem::path& a, const std::filesystem::path& b) {
  const SafetensorsFile fa = SafetensorsFile::open(a.string()),
                        fb = SafetensorsFile::open(b.string());
  ASSERT_EQ(fa.names(), fb.names());
  for (const std::string& name : fa.names()) {
    const SafetensorsFile::View va = fa.get(name), vb = fb.get(name);
    ASSERT_EQ(va.bytes, vb.bytes) << name;
    EXPECT_EQ(std::memcmp(va.data, vb.data, va.bytes), 0) << name << " differs";
  }
}

// A refusal as the CLI makes it: one "hwt: error: " line naming `needle`, and `exit_code`.
inline void expect_one_line_error(const CliResult& r, int exit_code, const std::string& needle) {
  EXPECT_EQ(r.exit_code, exit_code) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.err.rfind("hwt: error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << "expected '" << needle << "' in: " << r.err;
}

// Small, fast model and data settings for the tiny TSV fixture (tiny_sentiment_tsv); callers add
// the steps they need.
inline const std::string kTinyTsvSettings =
    "--set data.format=tsv --set model.hidden=16 --set model.heads=2 --set model.ffn=32 "
    "--set model.layers=1 --set data.max_len=16 --set data.min_freq=1 --set train.batch_size=8 "
    "--set train.threads=1 --quiet";

// A small learnable two-class text dataset in TSV: words from one of two vocabularies.
inline std::string tiny_sentiment_tsv(int lines, unsigned seed) {
  const char* pos[] = {"good", "great", "fine", "lovely", "happy", "superb"};
  const char* neg[] = {"bad", "awful", "poor", "sad", "terrible", "ugly"};
  const char* filler[] = {"the", "movie", "was", "very", "and", "plot", "acting"};
  std::string s;
  unsigned r = seed;
  auto next = [&] { return r = r * 1103515245u + 12345u, (r >> 16) & 0x7fff; };
  for (int i = 0; i < lines; ++i) {
    const bool p = next() % 2;
    std::string text;
    const int words = 4 + static_cast<int>(next() % 6);
    for (int w = 0; w < words; ++w) {
      if (!text.empty()) text += ' ';
      text += next() % 3 == 0 ? (p ? pos : neg)[next() % 6] : filler[next() % 7];
    }
    text += std::string(" ") + (p ? pos : neg)[next() % 6];
    s += text + "\t" + (p ? "pos" : "neg") + "\n";
  }
  return s;
}

// A small classifier on dir/train.tsv (tiny_sentiment_tsv), run on one CPU thread.
inline RunConfig tiny_tsv_classifier(const TempDir& dir) {
  RunConfig c;
  c.data.format = DataFormat::Tsv;
  c.data.path = dir / "train.tsv";
  c.data.min_freq = 1;
  c.data.max_len = 16;
  c.model.hidden = 32;
  c.model.heads = 4;
  c.model.ffn = 64;
  c.model.layers = 2;
  c.model.max_seq = 16;
  c.train.batch_size = 16;
  c.train.threads = 1;
  c.train.log_every = 5;
  return c;
}

}  // namespace hwt::test
