#include "core/files.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/error.h"

namespace hwt {
namespace {

namespace fs = std::filesystem;

class AtomicFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           fmt::format("hwt_atomic_{}_{}", ::getpid(),
                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::vector<std::string> listing() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename());
    return names;
  }

  fs::path dir_;
};

TEST_F(AtomicFile, WriteThenReadRoundTripsBinary) {
  std::string contents("a\0b\xff\n", 5);
  write_file_atomic(path("x.bin"), contents);
  EXPECT_EQ(read_file(path("x.bin")), contents);
  write_file_atomic(path("empty"), "");
  EXPECT_EQ(read_file(path("empty")), "");
  EXPECT_EQ(listing().size(), 2u);
}

TEST_F(AtomicFile, CommitReplacesExistingFile) {
  write_file_atomic(path("r.json"), "old contents");
  {
    AtomicFileWriter w(path("r.json"));
    w.write("new");
    w.write(std::string(100000, 'z'));
    w.commit();
  }
  EXPECT_EQ(read_file(path("r.json")), "new" + std::string(100000, 'z'));
  EXPECT_EQ(listing(), std::vector<std::string>{"r.json"});
}

TEST_F(AtomicFile, NoTargetUntilCommit) {
  AtomicFileWriter w(path("ckpt"));
  w.write("partial");
  EXPECT_FALSE(fs::exists(path("ckpt")));
  // The data goes to a hidden temporary beside the target, so the rename stays in one filesystem.
  std::vector<std::string> names = listing();
  ASSERT_EQ(names.size(), 1u);
  EXPECT_EQ(names[0].rfind(".ckpt.tmp.", 0), 0u) << names[0];
  w.commit();
  EXPECT_EQ(listing(), std::vector<std::string>{"ckpt"});
}

TEST_F(AtomicFile, UncommittedWriterLeavesOldFileAndNoTemporary) {
  write_file_atomic(path("model.safetensors"), "old");
  {
    AtomicFileWriter w(path("model.safetensors"));
    w.write(std::string(4096, 'x'));
  }
  EXPECT_EQ(read_file(path("model.safetensors")), "old");
  EXPECT_EQ(listing(), std::vector<std::string>{"model.safetensors"});
}

TEST_F(AtomicFile, UncommittedWriterCreatesNothing) {
  { AtomicFileWriter w(path("new")); }
  EXPECT_TRUE(listing().empty());
}

TEST_F(AtomicFile, MissingDirectoryThrowsWithPath) {
  std::string target = path("no/such/dir/out.json");
  try {
    write_file_atomic(target, "x");
    FAIL() << "expected hwt::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(target), std::string::npos) << e.what();
  }
  EXPECT_THROW(AtomicFileWriter{target}, Error);
}

TEST_F(AtomicFile, ReadMissingFileIsInputError) {
  try {
    read_file(path("absent"));
    FAIL() << "expected hwt::InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "cannot read " + path("absent") + ": No such file or directory");
  }
  EXPECT_THROW(read_file(dir_.string()), InputError);  // a directory is unreadable as a file
}

}  // namespace
}  // namespace hwt
