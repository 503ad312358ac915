#include "core/files.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <filesystem>
#include <optional>
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

// A failed write of `target` (`doing` names the step, empty for the data itself): the place is
// the user's choice, so it is an InputError; a full disk or a file size limit says how much room
// there was.
[[noreturn]] void fail_write(const std::string& target, int err, std::string_view doing = {}) {
  std::string why = std::generic_category().message(err);
  if (err == ENOSPC || err == EDQUOT) {
    if (const auto free = free_bytes(directory_of(target)))
      why += fmt::format(" ({} bytes free there)", *free);
  } else if (err == EFBIG) {
    rlimit limit{};
    if (::getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
      why += fmt::format(" (this process may write files of at most {} bytes: ulimit -f)",
                         static_cast<uint64_t>(limit.rlim_cur));
  }
  fail_input("cannot write {}: {}{}", target, doing, why);
}

constexpr std::string_view kTempMarker = ".hwt-tmp.";

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown-host";
  return buf;
}

// Unique within the process (counter), across processes (pid) and hosts sharing a folder (host
// name); hidden so that directory listings of run folders stay clean.
std::string temp_name_for(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  std::filesystem::path p(path);
  std::string name = fmt::format(".{}{}{}.{}.{}", p.filename().string(), kTempMarker, host_name(),
                                 ::getpid(), counter++);
  return (p.parent_path() / name).string();
}

// The host and pid of a temporary file's name, or nullopt when `name` is not one.
struct TempOwner {
  std::string host;
  pid_t pid;
};
std::optional<TempOwner> temp_owner(const std::string& name) {
  const size_t marker = name.rfind(kTempMarker);
  if (name.empty() || name[0] != '.' || marker == std::string::npos) return std::nullopt;
  const std::string rest = name.substr(marker + kTempMarker.size());  // host.pid.n
  const size_t last = rest.rfind('.');
  if (last == std::string::npos || last == 0) return std::nullopt;
  const size_t before = rest.rfind('.', last - 1);
  if (before == std::string::npos || before == 0) return std::nullopt;
  auto digits = [](std::string_view s) {
    return !s.empty() && s.size() < 10 && s.find_first_not_of("0123456789") == s.npos;
  };
  const std::string pid = rest.substr(before + 1, last - before - 1);
  if (!digits(pid) || !digits(std::string_view(rest).substr(last + 1))) return std::nullopt;
  return TempOwner{rest.substr(0, before), static_cast<pid_t>(std::stol(pid))};
}

void fsync_directory(const std::string& dir, const std::string& target) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) fail_write(target, errno, fmt::format("cannot open directory {}: ", dir));
  // Some filesystems cannot fsync a directory (EINVAL); the rename itself has happened.
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0 && err != EINVAL)
    fail_write(target, err, fmt::format("fsync of directory {}: ", dir));
}

}  // namespace

AtomicFileWriter::AtomicFileWriter(std::string path)
    : path_(std::move(path)), tmp_path_(temp_name_for(path_)) {
  fd_ = ::open(tmp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd_ < 0)
    fail_write(path_, errno, fmt::format("cannot create temporary file {}: ", tmp_path_));
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
      fail_write(path_, errno);
    }
    p += n;
    bytes -= static_cast<size_t>(n);
  }
}

void AtomicFileWriter::write_at(size_t offset, std::string_view s) {
  HWT_CHECK(fd_ >= 0, "write to {} after commit", path_);
  for (size_t done = 0; done < s.size();) {
    const ssize_t n =
        ::pwrite(fd_, s.data() + done, s.size() - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      fail_write(path_, errno);
    }
    done += static_cast<size_t>(n);
  }
}

void AtomicFileWriter::commit() {
  HWT_CHECK(fd_ >= 0, "commit of {} twice", path_);
  if (::fsync(fd_) != 0) fail_write(path_, errno, "fsync: ");
  // close() can report deferred write errors (e.g. on network filesystems).
  int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0) fail_write(path_, errno, "close: ");
  if (::rename(tmp_path_.c_str(), path_.c_str()) != 0)
    fail_write(path_, errno, fmt::format("rename from {}: ", tmp_path_));
  committed_ = true;
  fsync_directory(directory_of(path_), path_);
}

std::vector<std::string> remove_stale_temporaries(const std::string& dir) {
  std::vector<std::string> removed;
  std::error_code ec;
  const std::string here = host_name();
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    const std::optional<TempOwner> owner = temp_owner(name);
    if (!owner || owner->host != here || !entry.is_regular_file(ec)) continue;
    // kill(pid, 0) fails with ESRCH exactly when no process has that id.
    if (::kill(owner->pid, 0) == 0 || errno != ESRCH) continue;
    if (std::filesystem::remove(entry.path(), ec)) removed.push_back(name);
  }
  return removed;
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

std::optional<uint64_t> free_bytes(const std::string& dir) {
  struct statvfs fs {};
  if (::statvfs(dir.c_str(), &fs) != 0) return std::nullopt;
  return static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
}

void check_output_folder(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path existing = fs::absolute(dir, ec);
  while (!existing.empty() && !fs::exists(existing, ec) && existing != existing.parent_path())
    existing = existing.parent_path();
  if (!fs::is_directory(existing, ec))
    fail_input("cannot create output folder {}: {} is not a folder", dir, existing.string());
  if (::access(existing.c_str(), W_OK | X_OK) != 0)
    fail_input("cannot write output folder {}: {}: {}", dir, existing.string(), errno_text());
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
