#include "core/binary_file.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
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

Bytes read_file(const std::string& path, const char* kind) {
  std::ifstream in(path, std::ios::binary);
  ENGINE_CHECK(in.good(), path, ": cannot open ", kind, " file (missing or unreadable)");
  return Bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

namespace {

// A file descriptor closed on every path out, so a failed write never leaks one.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

void write_all(int fd, const char* data, size_t n, const std::string& path, int pause_ms) {
  constexpr size_t CHUNK = size_t{64} << 10;
  while (n > 0) {
    const ssize_t written = ::write(fd, data, n < CHUNK ? n : CHUNK);
    if (written < 0 && errno == EINTR) continue;  // a signal arrived: write the rest
    ENGINE_CHECK(written > 0, path, ": write failed (disk full?)");
    data += written;
    n -= static_cast<size_t>(written);
    if (pause_ms > 0 && n > 0) std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
  }
}

}  // namespace

void write_file_atomically(const std::string& path, const char* data, size_t n, int pause_ms) {
  const std::string tmp = path + ".tmp";
  {
    Fd file{::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)};
    ENGINE_CHECK(file.fd >= 0, path, ": cannot open for writing");
    write_all(file.fd, data, n, path, pause_ms);
    // The data must be on disk before the rename makes it the file: otherwise a power cut
    // could leave the new name pointing at blocks that were never written.
    ENGINE_CHECK(::fsync(file.fd) == 0, path, ": write failed (fsync)");
  }
  ENGINE_CHECK(std::rename(tmp.c_str(), path.c_str()) == 0, path, ": cannot rename ", tmp,
               " into place");
  // And the rename itself, which lives in the directory. Some file systems cannot fsync a
  // directory; the file is whole either way, so a failure here is not an error.
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  Fd directory{::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  if (directory.fd >= 0) ::fsync(directory.fd);
}

}  // namespace engine
