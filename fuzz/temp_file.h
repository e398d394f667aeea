// A scratch file for the fuzz targets whose parser takes a path, not bytes in memory.
//
// libFuzzer hands a target its input as a buffer, tens of thousands of times a second. The
// IDX, CIFAR-10 and weights readers open a file by name, so each target writes the input to
// one file of its own and calls the reader on that path. The file is made once per process
// with mkstemp (a unique name under /tmp, so parallel runs never share one), rewritten in
// place for every input, and deleted when the process exits normally. A run that crashes
// leaves it behind in /tmp: it is small, and it holds the input that crashed.
#pragma once
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace engine::fuzz {

class TempFile {
 public:
  // `tag` goes into the name, e.g. /tmp/engine_fuzz_idx_Ab12Cd, to tell the files apart.
  explicit TempFile(const std::string& tag) {
    std::string pattern = "/tmp/engine_fuzz_" + tag + "_XXXXXX";
    fd_ = ::mkstemp(pattern.data());  // replaces the XXXXXX in place and opens the file
    if (fd_ < 0) die("mkstemp", pattern);
    path_ = pattern;
  }
  ~TempFile() {
    ::close(fd_);
    ::unlink(path_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  // Makes the file hold exactly data[0, size) and returns its path. The bytes are written
  // over the old ones and the file is then cut to `size`. (Cutting it to 0 first would be
  // simpler, but ext4 writes a file truncated to 0 and rewritten out to disk when the reader
  // closes it: a disk write per input, which made the IDX target six times slower.)
  const std::string& write(const uint8_t* data, size_t size) {
    size_t done = 0;
    while (done < size) {
      const ssize_t n = ::pwrite(fd_, data + done, size - done, static_cast<off_t>(done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) die("pwrite", path_);
      done += static_cast<size_t>(n);
    }
    if (::ftruncate(fd_, static_cast<off_t>(size)) != 0) die("ftruncate", path_);
    return path_;
  }

  const std::string& path() const { return path_; }

 private:
  // A scratch file we cannot write is a broken machine, not a parser bug: stop loudly.
  [[noreturn]] static void die(const char* call, const std::string& path) {
    std::fprintf(stderr, "fuzz TempFile: %s(%s) failed: %s\n", call, path.c_str(),
                 std::strerror(errno));
    std::abort();
  }

  int fd_ = -1;
  std::string path_;
};

}  // namespace engine::fuzz
