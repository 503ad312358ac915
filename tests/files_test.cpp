#include "core/files.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
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
  EXPECT_EQ(names[0].rfind(".ckpt.hwt-tmp.", 0), 0u) << names[0];
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

TEST_F(AtomicFile, WriteAtOverwritesWrittenBytes) {
  AtomicFileWriter w(path("h"));
  w.write("0000data");
  w.write_at(0, "head");
  w.commit();
  EXPECT_EQ(read_file(path("h")), "headdata");
}

// A process that has exited: its pid names no running process (until the kernel reuses it).
pid_t exited_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  return child;
}

std::string this_host() {
  char buf[256] = {};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

// Only temporaries of this host whose writer has died go: a running writer's (this process's),
// another host's, the target files and other hidden files stay.
TEST_F(AtomicFile, StaleTemporariesOfDeadWritersAreRemoved) {
  const pid_t dead = exited_pid();
  const std::string host = this_host();
  const std::string stale = fmt::format(".checkpoint.safetensors.hwt-tmp.{}.{}.0", host, dead);
  const std::vector<std::string> kept = {fmt::format(".run.json.hwt-tmp.{}.{}.3", host, ::getpid()),
                                         fmt::format(".run.json.hwt-tmp.other-host.{}.0", dead),
                                         fmt::format(".x.hwt-tmp.{}.{}.notanumber", host, dead),
                                         "checkpoint.safetensors", ".hidden"};
  for (const std::string& name : kept) write_file_atomic(path(name), "x");
  write_file_atomic(path(stale), "partial");
  AtomicFileWriter running(path("best.safetensors"));  // its temporary belongs to this process
  EXPECT_EQ(remove_stale_temporaries(dir_.string()), std::vector<std::string>{stale});
  EXPECT_FALSE(fs::exists(path(stale)));
  for (const std::string& name : kept) EXPECT_TRUE(fs::exists(path(name))) << name;
  EXPECT_EQ(listing().size(), kept.size() + 1);  // + the running writer's temporary
  EXPECT_TRUE(remove_stale_temporaries(path("no-such-dir")).empty());
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
