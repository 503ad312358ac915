#include "core/files.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <filesystem>
#include <system_error>

#include "core/error.h"

namespace hwt {
namespace {

std::string errno_text() {
  return std::generic_category().message(errno);
}

std::string directory_of(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

// Unique within the process (counter) and across processes (pid); hidden so that directory
// listings of run folders stay clean.
std::string temp_name_for(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  std::filesystem::path p(path);
  std::string name = fmt::format(".{}.tmp.{}.{}", p.filename().string(), ::getpid(), counter++);
  return (p.parent_path() / name).string();
}

void fsync_directory(const std::string& dir, const std::string& target) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) fail("cannot write {}: cannot open directory {}: {}", target, dir, errno_text());
  // Some filesystems cannot fsync a directory (EINVAL); the rename itself has happened.
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0 && err != EINVAL)
    fail("cannot write {}: fsync of directory {}: {}", target, dir,
         std::generic_category().message(err));
}

}  // namespace

AtomicFileWriter::AtomicFileWriter(std::string path)
    : path_(std::move(path)), tmp_path_(temp_name_for(path_)) {
  fd_ = ::open(tmp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd_ < 0)
    fail("cannot write {}: cannot create temporary file {}: {}", path_, tmp_path_, errno_text());
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(tmp_path_.c_str());
}

void AtomicFileWriter::write(const void* data, size_t bytes) {
  HWT_CHECK(fd_ >= 0, "write to {} after commit", path_);
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    ssize_t n = ::write(fd_, p, bytes);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("cannot write {}: {}", path_, errno_text());
    }
    p += n;
    bytes -= static_cast<size_t>(n);
  }
}

void AtomicFileWriter::commit() {
  HWT_CHECK(fd_ >= 0, "commit of {} twice", path_);
  if (::fsync(fd_) != 0) fail("cannot write {}: fsync: {}", path_, errno_text());
  // close() can report deferred write errors (e.g. on network filesystems).
  int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0) fail("cannot write {}: close: {}", path_, errno_text());
  if (::rename(tmp_path_.c_str(), path_.c_str()) != 0)
    fail("cannot write {}: rename from {}: {}", path_, tmp_path_, errno_text());
  committed_ = true;
  fsync_directory(directory_of(path_), path_);
}

void write_file_atomic(const std::string& path, std::string_view contents) {
  AtomicFileWriter w(path);
  w.write(contents);
  w.commit();
}

std::shared_ptr<const MappedFile> MappedFile::open(const std::string& path, std::string_view what) {
  const std::string named = what.empty() ? path : fmt::format("{} {}", what, path);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail_input("cannot read {}: {}", named, errno_text());
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    fail_input("cannot read {}: not a regular file", named);
  }
  std::shared_ptr<MappedFile> f(new MappedFile);
  f->size_ = static_cast<size_t>(st.st_size);
  if (f->size_ > 0) {  // mmap refuses a length of 0; an empty file maps to ""
    void* p = ::mmap(nullptr, f->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const std::string reason = errno_text();
      ::close(fd);
      fail_input("cannot read {}: {}", named, reason);
    }
    f->data_ = static_cast<const char*>(p);
    f->mapped_ = true;
  }
  ::close(fd);  // the mapping keeps the file open
  return f;
}

MappedFile::~MappedFile() {
  if (mapped_) ::munmap(const_cast<char*>(data_), size_);
}

std::string read_file(const std::string& path, std::string_view what) {
  const std::string named = what.empty() ? path : fmt::format("{} {}", what, path);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail_input("cannot read {}: {}", named, errno_text());
  struct stat st {};
  // One spare byte so a regular file is read in one call and EOF is seen without regrowing.
  size_t cap = (::fstat(fd, &st) == 0 && st.st_size > 0) ? static_cast<size_t>(st.st_size) : 0;
  std::string out(cap + 1, '\0');
  size_t len = 0;
  for (;;) {
    if (len == out.size()) out.resize(out.size() * 2);
    ssize_t n = ::read(fd, out.data() + len, out.size() - len);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      fail_input("cannot read {}: {}", named, std::generic_category().message(err));
    }
    if (n == 0) break;
    len += static_cast<size_t>(n);
  }
  ::close(fd);
  out.resize(len);
  return out;
}

void make_output_folder(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) fail_input("cannot create output folder {}: {}", dir, ec.message());
}

void write_output_file(const std::string& dir, const std::string& name, std::string_view text) {
  make_output_folder(dir);
  write_file_atomic((std::filesystem::path(dir) / name).string(), text);
}

}  // namespace hwt
