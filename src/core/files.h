// Whole files in and out. Output is atomic: data goes to a temporary file beside the target,
// which is fsynced and renamed over the target only on commit(), so a crash never leaves a
// half-written file. A temporary file is named ".<target>.hwt-tmp.<host>.<pid>.<n>", so that one
// left by a killed process can be recognised and removed (remove_stale_temporaries). Reading and
// the output folders of commands raise InputError naming the path, since both come from the user.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hwt {

class AtomicFileWriter {
 public:
  // Creates the temporary file; throws hwt::Error if it cannot (e.g. missing directory).
  explicit AtomicFileWriter(std::string path);
  // Removes the temporary file unless commit() succeeded; the target is never touched.
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  // Unbuffered: each call goes to the OS, so callers should write large chunks.
  void write(const void* data, size_t bytes);
  void write(std::string_view s) { write(s.data(), s.size()); }
  // Overwrites bytes already written, from `offset` on (e.g. a header completed at the end).
  void write_at(size_t offset, std::string_view s);
  // fsync the file, rename it over the target, fsync the directory.
  void commit();

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::string tmp_path_;
  int fd_ = -1;
  bool committed_ = false;
};

// Removes the temporary files in `dir` (not its subfolders) that a process of this host left
// behind when it died mid-write (its pid is no longer running); returns their names. Files of
// running processes and of other hosts are left alone.
std::vector<std::string> remove_stale_temporaries(const std::string& dir);

void write_file_atomic(const std::string& path, std::string_view contents);

// The whole file; throws hwt::InputError "cannot read <what> <path>: <reason>" (`what` names
// the kind of file, e.g. "config", "data file"; empty: just the path).
std::string read_file(const std::string& path, std::string_view what = {});

// A whole file mapped read-only into memory: pages are read from disk when touched and can be
// dropped again by the OS, so a file larger than free memory can be read tensor by tensor.
// InputError like read_file's when it cannot be opened or mapped.
class MappedFile {
 public:
  static std::shared_ptr<const MappedFile> open(const std::string& path,
                                                std::string_view what = {});
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const char* data() const { return data_; }
  size_t size() const { return size_; }
  std::string_view bytes() const { return {data_, size_}; }

 private:
  MappedFile() = default;
  const char* data_ = "";
  size_t size_ = 0;
  bool mapped_ = false;
};

// Bytes an unprivileged process may still write on the filesystem holding `dir` (which must
// exist); nullopt when the system cannot say.
std::optional<uint64_t> free_bytes(const std::string& dir);

// Checks, before any work, that the folder `dir` can be created or written into: its nearest
// existing ancestor is a folder this process may write. InputError naming the folder otherwise.
void check_output_folder(const std::string& dir);

// Creates the folder `dir` (and its parents) that a command writes into; InputError "cannot
// create output folder <dir>: <reason>".
void make_output_folder(const std::string& dir);

// Writes dir/name atomically, creating `dir` first.
void write_output_file(const std::string& dir, const std::string& name, std::string_view text);

}  // namespace hwt
