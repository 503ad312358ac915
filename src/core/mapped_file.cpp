#include "core/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include "core/error.h"

namespace hwt {

std::unique_ptr<const MappedFile> MappedFile::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return nullptr;
    fail_input("cannot read {}: {}", path, std::generic_category().message(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    fail_input("cannot read {}: {}", path, std::generic_category().message(err));
  }
  const auto size = static_cast<size_t>(st.st_size);
  // mmap of zero bytes is an error; an empty file maps to nothing.
  void* p = size == 0 ? nullptr : ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  const int err = errno;
  ::close(fd);  // the mapping keeps the file
  if (p == MAP_FAILED) fail_input("cannot map {}: {}", path, std::generic_category().message(err));
  return std::unique_ptr<const MappedFile>(new MappedFile(static_cast<const std::byte*>(p), size));
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<std::byte*>(data_), size_);
}

}  // namespace hwt
