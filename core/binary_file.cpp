#include "core/binary_file.h"

#include <fcntl.h>
#include <limits.h>  // NAME_MAX
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <new>
#include <random>
#include <thread>

#include "core/error.h"

namespace engine {

uint32_t crc32_of(const char* data, size_t n) {
  uLong crc = crc32(0L, Z_NULL, 0);
  // zlib takes uInt lengths: feed large buffers in pieces.
  while (n > 0) {
    const uInt piece = n > (1u << 30) ? (1u << 30) : static_cast<uInt>(n);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(data), piece);
    data += piece;
    n -= piece;
  }
  return static_cast<uint32_t>(crc);
}

ByteWriter::ByteWriter(const char (&magic)[8], uint32_t version) {
  bytes(magic, sizeof magic);
  put<uint32_t>(version);
}

void ByteWriter::bytes(const void* data, size_t n) {
  // resize + memcpy rather than insert: GCC 12 sees the 8-byte magic inserted into an empty
  // vector and warns, wrongly, of an overflow (-Wstringop-overflow, -Warray-bounds).
  const size_t at = buf_.size();
  buf_.resize(at + n);
  if (n > 0) std::memcpy(buf_.data() + at, data, n);
}

void ByteWriter::string(const std::string& s) {
  put<uint32_t>(static_cast<uint32_t>(s.size()));
  bytes(s.data(), s.size());
}

void ByteWriter::blob(const Bytes& b) {
  put<uint64_t>(b.size());
  bytes(b.data(), b.size());
}

const Bytes& ByteWriter::finish() {
  put<uint32_t>(crc32_of(buf_.data(), buf_.size()));
  return buf_;
}

ByteReader::ByteReader(const Bytes& file, const char (&magic)[8], uint32_t max_version,
                       std::string path, const char* kind)
    : buf_(file), end_(file.size()), path_(std::move(path)) {
  ENGINE_CHECK(file.size() >= 8 + 2 * sizeof(uint32_t), path_, ": file is truncated (",
               file.size(), " bytes is too short for a ", kind, " file)");
  ENGINE_CHECK(std::memcmp(file.data(), magic, 8) == 0, path_, ": not a ", kind,
               " file (bad magic)");
  end_ = file.size() - sizeof(uint32_t);  // everything before the checksum
  char skipped[8];
  bytes(skipped, sizeof skipped, "magic");
  version_ = get<uint32_t>("version");
  ENGINE_CHECK(version_ <= max_version, path_, ": written by a newer engine (format version ",
               version_, "; this build reads up to ", max_version, ")");
  ENGINE_CHECK(version_ >= 1, path_, ": invalid format version 0");
  uint32_t stored_crc;
  std::memcpy(&stored_crc, file.data() + end_, sizeof stored_crc);
  ENGINE_CHECK(stored_crc == crc32_of(file.data(), end_), path_,
               ": checksum mismatch (the file is corrupted or truncated)");
}

void ByteReader::bytes(void* dst, size_t n, const char* what) {
  ENGINE_CHECK(n <= end_ - pos_, path_, ": file is truncated (while reading ", what, ")");
  // n == 0: an empty blob's dst is an empty vector's data(), which may be null, and memcpy's
  // pointers must not be even for no bytes (found by fuzz_checkpoint's first run).
  if (n > 0) std::memcpy(dst, buf_.data() + pos_, n);
  pos_ += n;
}

std::string ByteReader::string(size_t max_length, const char* what) {
  const auto length = get<uint32_t>(what);
  ENGINE_CHECK(length <= max_length, path_, ": implausible length ", length, " of ", what);
  // Checked before allocating, like a blob's length.
  ENGINE_CHECK(length <= end_ - pos_, path_, ": file is truncated (while reading ", what, ")");
  std::string s(length, '\0');
  bytes(s.data(), length, what);
  return s;
}

Bytes ByteReader::blob(const char* what) {
  const auto length = get<uint64_t>(what);
  // Checked before allocating: a corrupt length must not ask for exabytes.
  ENGINE_CHECK(length <= end_ - pos_, path_, ": file is truncated (while reading ", what, ")");
  Bytes b(static_cast<size_t>(length));
  bytes(b.data(), b.size(), what);
  return b;
}

void ByteReader::expect_end(const char* after) const {
  ENGINE_CHECK(pos_ == end_, path_, ": ", end_ - pos_, " unexpected bytes after ", after);
}

namespace {

// A file descriptor closed on every path out, so a failed write never leaks one.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// errno's text, for messages.
std::string reason(int error) { return std::strerror(error); }

void write_all(int fd, const char* data, size_t n, const std::string& path, int pause_ms) {
  constexpr size_t CHUNK = size_t{64} << 10;
  while (n > 0) {
    const ssize_t written = ::write(fd, data, n < CHUNK ? n : CHUNK);
    if (written < 0 && errno == EINTR) continue;  // a signal arrived: write the rest
    ENGINE_CHECK(written > 0, path, ": write failed (",
                 written < 0 ? reason(errno) : std::string("no bytes written; disk full?"), ")");
    data += written;
    n -= static_cast<size_t>(written);
    if (pause_ms > 0 && n > 0) std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
  }
}

// What a non-regular file is, for the refusal.
const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string parent_of(const std::string& path) {
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

// The file that writing `path` replaces: `path` itself, or, through symbolic links, the file
// they point to (which need not exist yet). Throws for a device, FIFO, socket or directory.
std::string file_to_replace(const std::string& path) {
  std::string target = path;
  for (int links = 0;; ++links) {
    struct stat st;
    if (::lstat(target.c_str(), &st) != 0) {
      const int error = errno;
      // Nothing there yet, or nothing can be (a missing folder, a file where a folder should
      // be, a name too long): the temporary's open then says which.
      if (error == ENOENT || error == ENOTDIR || error == ENAMETOOLONG) return target;
      throw Error(detail::concat(path, ": cannot check what is at ", target, " (", reason(error),
                                 ")"));
    }
    if (S_ISREG(st.st_mode)) return target;
    if (!S_ISLNK(st.st_mode)) {
      if (target == path)
        throw Error(detail::concat("refusing to replace ", path, ": it is ", kind_of(st.st_mode),
                                   ", not a regular file"));
      throw Error(detail::concat("refusing to replace ", path, ": it is a symbolic link to ",
                                 target, ", which is ", kind_of(st.st_mode),
                                 ", not a regular file"));
    }
    ENGINE_CHECK(links < 40, path, ": cannot resolve the symbolic link (",
                 reason(ELOOP), ")");
    std::vector<char> buf(static_cast<size_t>(st.st_size > 0 ? st.st_size : 255) + 1);
    const ssize_t length = ::readlink(target.c_str(), buf.data(), buf.size());
    ENGINE_CHECK(length >= 0 && static_cast<size_t>(length) < buf.size(), path,
                 ": cannot read the symbolic link ", target, " (",
                 length < 0 ? reason(errno) : std::string("it changed while read"), ")");
    const std::string next(buf.data(), static_cast<size_t>(length));
    // A relative link is relative to the folder holding the link.
    target = !next.empty() && next[0] == '/' ? next : parent_of(target) + "/" + next;
  }
}

// What a temporary's name adds to FILE's: ".tmp." and six random letters and digits.
constexpr size_t TEMPORARY_SUFFIX = 11;

// The temporary's name less its six random characters: `target` + ".tmp.", or, where target's
// name is too long to take the suffix within the folder's name limit, target's name cut short
// to make room (the temporary only has to be unique in the folder, which O_EXCL sees to).
std::string temporary_prefix(const std::string& path, const std::string& target) {
  const size_t name = std::filesystem::path(target).filename().string().size();
  // The folder's limit on a name: 255 bytes on most file systems, and NAME_MAX (255) where the
  // folder cannot be asked (it is missing: the open then says so).
  const long limit = ::pathconf(parent_of(target).c_str(), _PC_NAME_MAX);
  const size_t max_name = limit > 0 ? static_cast<size_t>(limit) : NAME_MAX;
  if (name > max_name)
    throw Error(detail::concat(path, ": cannot open for writing (", reason(ENAMETOOLONG),
                               ": the name is ", name, " bytes, the file system allows ", max_name,
                               ")"));
  const size_t room = max_name > TEMPORARY_SUFFIX ? max_name - TEMPORARY_SUFFIX : 1;
  return target.substr(0, target.size() - name + std::min(name, room)) + ".tmp.";
}

// Creates the temporary (temporary_prefix and six random letters and digits) exclusively
// (O_EXCL, mode 0644 less the umask); returns its descriptor and sets `tmp` to its name.
int create_temporary(const std::string& path, const std::string& target, std::string& tmp) {
  static const char letters[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  thread_local std::mt19937_64 random{std::random_device{}() ^
                                      (static_cast<uint64_t>(::getpid()) << 32) ^
                                      std::hash<std::thread::id>{}(std::this_thread::get_id())};
  const std::string prefix = temporary_prefix(path, target);
  for (int attempt = 0; attempt < 100; ++attempt) {
    tmp = prefix;
    for (int i = 0; i < 6; ++i) tmp += letters[random() % (sizeof letters - 1)];
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) return fd;
    const int error = errno;
    if (error == EEXIST) continue;  // another writer's temporary: draw another name
    // "cannot open for writing", as before unique temporaries, then why.
    throw Error(detail::concat(path, ": cannot open for writing (", reason(error), ")"));
  }
  throw Error(detail::concat(path, ": cannot open for writing (100 temporary names ", prefix,
                             "XXXXXX were taken)"));
}

}  // namespace

void write_file_atomically(const std::string& path, const char* data, size_t n, int pause_ms) {
  const std::string target = file_to_replace(path);
  std::string tmp;
  Fd file{create_temporary(path, target, tmp)};
  // Removes the temporary on every way out but success.
  struct Remove {
    const std::string& name;
    bool armed = true;
    ~Remove() {
      if (armed) ::unlink(name.c_str());
    }
  } remove_tmp{tmp};
  write_all(file.fd, data, n, path, pause_ms);
  // The data must be on disk before the rename makes it the file: otherwise a power cut
  // could leave the new name pointing at blocks that were never written.
  ENGINE_CHECK(::fsync(file.fd) == 0, path, ": write failed (fsync: ", reason(errno), ")");
  const int closed = ::close(file.fd);
  file.fd = -1;
  ENGINE_CHECK(closed == 0, path, ": write failed (close: ", reason(errno), ")");
  if (std::rename(tmp.c_str(), target.c_str()) != 0) {
    const int error = errno;
    throw Error(detail::concat(path, ": cannot rename ", tmp, " into place (", reason(error),
                               ")"));
  }
  remove_tmp.armed = false;
  // And the rename itself, which lives in the directory. Some file systems cannot fsync a
  // directory; the file is whole either way, so a failure here is not an error.
  Fd directory{::open(parent_of(target).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  if (directory.fd >= 0) ::fsync(directory.fd);
}

void check_writable(const std::string& path) {
  const std::string target = file_to_replace(path);
  std::string tmp;
  const Fd file{create_temporary(path, target, tmp)};
  ::unlink(tmp.c_str());
}

// ---- Reading ---------------------------------------------------------------------------------

InputFile::InputFile(const std::string& path, std::string where) : where_(std::move(where)) {
  // O_NONBLOCK: opening a FIFO that no process writes to would otherwise wait for a writer,
  // before fstat could refuse it. (On a regular file the flag changes nothing.) O_NOCTTY: a
  // terminal device named by mistake must not become the process's controlling terminal.
  fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd_ < 0) {
    const int error = errno;
    if (error == ENOENT) throw Error(where_ + ": no such file");
    throw Error(detail::concat(where_, ": cannot open (", reason(error), ")"));
  }
  struct stat st;
  if (::fstat(fd_, &st) != 0) {
    const int error = errno;
    ::close(fd_);
    throw Error(detail::concat(where_, ": cannot check what it is (", reason(error), ")"));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd_);
    // To a user a directory is not a file at all; a FIFO or a device is a file of another kind.
    throw Error(detail::concat(where_, ": is ", kind_of(st.st_mode),
                               S_ISDIR(st.st_mode) ? ", not a file" : ", not a regular file"));
  }
  size_ = static_cast<uint64_t>(st.st_size);
}

InputFile::~InputFile() { ::close(fd_); }

size_t InputFile::read(void* dst, size_t n) {
  // Never past the size taken at the open: a file that grows while it is read cannot make a
  // buffer sized by size() overflow, or a read go on without end.
  const size_t want = static_cast<size_t>(std::min<uint64_t>(n, size_ - offset_));
  size_t total = 0;
  while (total < want) {
    const ssize_t got = ::read(fd_, static_cast<char*>(dst) + total, want - total);
    if (got < 0 && errno == EINTR) continue;  // a signal arrived: read on
    ENGINE_CHECK(got >= 0, where_, ": read error (", reason(errno), ")");
    if (got == 0) break;  // the file was cut short since the open
    total += static_cast<size_t>(got);
  }
  offset_ += total;
  return total;
}

void InputFile::seek(uint64_t offset) {
  ENGINE_CHECK(offset <= size_, where_, ": cannot seek to byte ", offset, " of ", size_);
  ENGINE_CHECK(::lseek(fd_, static_cast<off_t>(offset), SEEK_SET) >= 0, where_,
               ": cannot seek to byte ", offset, " (", reason(errno), ")");
  offset_ = offset;
}

bool path_exists(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) return true;
  const int error = errno;
  // ENOTDIR: a file where a folder on the way should be, so nothing can be at the path.
  if (error == ENOENT || error == ENOTDIR) return false;
  throw Error(detail::concat(path, ": cannot tell whether it exists (", reason(error), ")"));
}

Bytes read_file(const std::string& path, const char* kind) {
  InputFile file(path, detail::concat(kind, " file ", path));
  Bytes bytes;
  try {
    bytes.resize(static_cast<size_t>(file.size()));
  } catch (const std::bad_alloc&) {
    throw Error(detail::concat(file.where(), ": ", file.size(),
                               " bytes, too large to read into memory"));
  }
  const size_t got = file.read(bytes.data(), bytes.size());
  ENGINE_CHECK(got == bytes.size(), file.where(), ": read ", got, " of its ", bytes.size(),
               " bytes (the file was cut short while it was read)");
  return bytes;
}

}  // namespace engine
