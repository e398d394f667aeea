// What the file-format tests (IDX, CIFAR-10, ...) share: a scratch directory, raw byte I/O,
// and the check that a refused file gives one line naming the file and the problem.
#pragma once
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <string>
#include <vector>

#include "core/error.h"

namespace engine::test {

using Bytes = std::vector<uint8_t>;

// A fresh directory under the system temp dir, removed with everything in it at the end.
class TempDir {
 public:
  TempDir() {
    static int counter = 0;
    path_ = std::filesystem::temp_directory_path() /
            ("engine_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::string str() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

inline void write_bytes(const std::string& path, const Bytes& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out.good());
}

inline Bytes read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Runs f, which must throw engine::Error, and returns the message; any other exception
// escapes and fails the test, and no exception gives a message no check will accept.
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const engine::Error& e) {
    return e.what();
  }
  return "<no engine::Error was thrown>";
}

// The message must be one line and contain every one of `parts`.
inline void check_message(const std::string& message, std::initializer_list<std::string> parts) {
  INFO("error message: " << message);
  CHECK(message.find('\n') == std::string::npos);
  for (const std::string& part : parts) {
    INFO("expected to contain: " << part);
    CHECK(message.find(part) != std::string::npos);
  }
}

}  // namespace engine::test
