// What the tests of reading need besides plain files (issue 24): a FIFO that a reader must
// refuse rather than wait on, and a folder that may not be searched.
#pragma once
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <string>
#include <thread>
#include <utility>

namespace engine::test {

// A FIFO (named pipe) at `path`, removed at the end. A reader that opens it for reading - the
// fault under test - would wait for a writer forever and hang the test. So a watcher thread
// keeps trying to open the write end without blocking; the moment a reader waits on the FIFO
// that open succeeds, and the watcher closes it at once: the reader sees an empty stream, and
// the test fails on its message instead of hanging.
class WatchedFifo {
 public:
  explicit WatchedFifo(std::string path) : path_(std::move(path)) {
    REQUIRE(::mkfifo(path_.c_str(), 0644) == 0);
    watcher_ = std::thread([this] {
      while (!stop_) {
        // Fails (ENXIO) while no reader has the FIFO open: nothing to unblock yet.
        const int fd = ::open(path_.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd >= 0) ::close(fd);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    });
  }
  ~WatchedFifo() {
    stop_ = true;
    watcher_.join();
    ::unlink(path_.c_str());
  }
  WatchedFifo(const WatchedFifo&) = delete;
  WatchedFifo& operator=(const WatchedFifo&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::atomic<bool> stop_{false};
  std::thread watcher_;
};

// Takes every permission off an existing folder (chmod 000) and gives them back at the end, so
// that the folder can be removed.
class UnreadableFolder {
 public:
  explicit UnreadableFolder(std::string path) : path_(std::move(path)) {
    REQUIRE(::chmod(path_.c_str(), 0) == 0);
  }
  ~UnreadableFolder() { ::chmod(path_.c_str(), 0755); }
  UnreadableFolder(const UnreadableFolder&) = delete;
  UnreadableFolder& operator=(const UnreadableFolder&) = delete;

  // Whether this process looks inside it anyway: root (CAP_DAC_OVERRIDE), as in CI, ignores the
  // permissions, and then the folder is not unreadable at all.
  bool bypassed() const {
    struct stat st;
    return ::stat((path_ + "/anything").c_str(), &st) == 0 || errno != EACCES;
  }

 private:
  std::string path_;
};

}  // namespace engine::test
