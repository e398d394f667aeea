// What the engine's own binary files (weights, checkpoints) share: a header of a magic string
// and a format version, little-endian fields, a CRC-32 of everything before it at the end, a
// reader that refuses to run past the end, and replacing a file atomically, so a crash or a
// kill mid-write leaves the previous file whole (docs/weights_format.md, docs/checkpoints.md).
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace engine {

using Bytes = std::vector<char>;

// CRC-32 with zlib's polynomial.
uint32_t crc32_of(const char* data, size_t n);

// Appends little-endian fields to a buffer that starts with `magic` (8 bytes) and `version`;
// finish() appends the CRC-32 of it all. (The format is little-endian on disk, which is also
// every host this engine runs on; memcpy keeps it free of aliasing issues.)
class ByteWriter {
 public:
  ByteWriter(const char (&magic)[8], uint32_t version);
  template <typename T>
  void put(T value) {
    bytes(&value, sizeof(T));
  }
  void bytes(const void* data, size_t n);
  void string(const std::string& s);  // uint32 length, then the characters
  void blob(const Bytes& b);           // uint64 length, then the bytes
  // The finished file: the buffer with its checksum appended.
  const Bytes& finish();

 private:
  Bytes buf_;
};

// Reads the fields of a file that ByteWriter wrote, after checking, in this order, that it is
// long enough, its magic (else "not a <kind> file (bad magic)"), its version (at most
// `max_version`) and its checksum; every check throws engine::Error naming `path`.
class ByteReader {
 public:
  ByteReader(const Bytes& file, const char (&magic)[8], uint32_t max_version, std::string path,
             const char* kind);
  uint32_t version() const { return version_; }
  template <typename T>
  T get(const char* what) {
    T value;
    bytes(&value, sizeof(T), what);
    return value;
  }
  void bytes(void* dst, size_t n, const char* what);
  std::string string(size_t max_length, const char* what);
  Bytes blob(const char* what);  // uint64 length, then the bytes
  // Throws unless every byte before the checksum was read.
  void expect_end(const char* after) const;
  const std::string& path() const { return path_; }

 private:
  const Bytes& buf_;
  size_t end_;  // where the checksum starts
  size_t pos_ = 0;
  uint32_t version_ = 0;
  std::string path_;
};

// A file opened for reading, and only if it is a regular file: every reader of the engine opens
// its input through this (issue 24). A device is refused because it may never end (/dev/zero
// fills memory until the allocation fails), a FIFO because nothing may ever write to it (the
// read would wait forever), a directory or socket because it holds no data to read. The file's
// size is taken once, at the open, and reads stop there, so a buffer sized by size() is never
// larger than the file.
//
// Every failure throws engine::Error, one line that begins with `where` ("IDX file data/x",
// "weights file run.weights"): "<where>: no such file", "<where>: cannot open (Permission
// denied)", "<where>: is a FIFO (named pipe), not a regular file", "<where>: is a directory,
// not a file", "<where>: read error (Input/output error)".
class InputFile {
 public:
  InputFile(const std::string& path, std::string where);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  // The size in bytes when the file was opened.
  uint64_t size() const { return size_; }
  // Reads up to n bytes into dst and returns how many arrived: fewer than n only at the end of
  // the file (its size at the open, or earlier if the file has since been cut short).
  size_t read(void* dst, size_t n);
  // The next read starts at byte `offset` (at most size()).
  void seek(uint64_t offset);
  const std::string& where() const { return where_; }

 private:
  int fd_ = -1;
  uint64_t size_ = 0;
  uint64_t offset_ = 0;
  std::string where_;
};

// Whether anything is at `path` (symbolic links followed). "Nothing there" is an answer; a
// failure to look, such as a folder on the way that may not be searched, throws engine::Error
// "<path>: cannot tell whether it exists (Permission denied)", so that an unreadable folder is
// never taken for a missing file (and a loader never falls back to something else in silence).
bool path_exists(const std::string& path);

// The whole file, through InputFile: "<kind> file <path>: no such file", "... is a character
// device, not a regular file", ... A file too large to hold in memory is refused, naming its
// size, rather than ending in std::bad_alloc.
Bytes read_file(const std::string& path, const char* kind);

// Replaces the file at `path` with `data`, atomically: writes a temporary file of a unique
// name, `FILE.tmp.XXXXXX`, created exclusively (O_EXCL) in FILE's directory, fsyncs it, renames
// it over FILE and fsyncs the directory: a reader sees the old file or the new one, never a mix,
// even after a crash or a power cut, and two writers of one path (two runs in one folder) never
// share a temporary: the last rename wins and the file is always one writer's whole file.
//
// What may sit at `path` (checked with lstat before writing; throws engine::Error, one line):
// - nothing, or a regular file: replaced;
// - a device, FIFO, socket or directory: refused, naming the path and what it is ("refusing to
//   replace /dev/null: it is a character device, not a regular file"), and left as it was;
// - a symbolic link: resolved deliberately, link by link (at most 40): the file it points to is
//   replaced (or created, for a dangling link whose folder exists) by a temporary in *that*
//   file's folder, and the link itself is kept. A link to a device, FIFO, socket or directory is
//   refused like the thing itself, naming both.
// A name the file system allows but with no room left for the 11-character suffix gets a
// temporary whose name is FILE's cut short; a name longer than the file system allows is refused
// ("File name too long: the name is 300 bytes, the file system allows 255").
// On any failure (open, write, fsync, close, rename) the temporary is removed and the error names
// the path, the step and the system's reason (strerror). The call returns only after the rename
// succeeded, so a caller's "saved" line that follows it is true. (Between the lstat and the
// rename another process could put something else at the path; that race is not guarded
// against.)
// `pause_ms` > 0 sleeps that long after every 64 KiB written: a hook for the tests that kill a
// writer mid-write (tests/test_checkpoint_cli.sh).
void write_file_atomically(const std::string& path, const char* data, size_t n, int pause_ms = 0);

// Checks now, before any work, that write_file_atomically(path, ...) could write `path` later:
// the same rules for what sits at the path (links resolved, anything but a regular file
// refused), then a temporary created in the folder and removed, which proves that the folder
// exists and may be written. Throws the one-line engine::Error the write would throw ("PATH:
// cannot open for writing (Permission denied)"); changes nothing. (A disk that fills up later
// is found by the write itself.)
void check_writable(const std::string& path);

}  // namespace engine
