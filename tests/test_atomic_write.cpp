// The shared atomic writer (core/binary_file.h, write_file_atomically), issue 24 classes 1, 2
// and 3: what sits at the path (FIFO, directory, symbolic link), unique temporaries (two writers
// of one path; a failed write leaves none behind), a name with no room for the temporary's
// suffix, and check_writable, which refuses before any work what the write would refuse.
#include <doctest/doctest.h>

#include <cerrno>
#include <cstring>

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "core/binary_file.h"
#include "core/error.h"

using namespace engine;
namespace fs = std::filesystem;

namespace {

const char MAGIC[8] = {'T', 'E', 'S', 'T', 'A', 'T', 'O', 'M'};

// A fresh, empty folder for one test case, removed at the end.
struct Folder {
  fs::path dir;
  explicit Folder(const std::string& name)
      : dir(fs::temp_directory_path() /
            ("engine_test_atomic_" + std::to_string(::getpid()) + "_" + name)) {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Folder() {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }
  std::string operator/(const std::string& name) const { return (dir / name).string(); }
  // The names in the folder, sorted.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& entry : fs::directory_iterator(dir)) out.push_back(entry.path().filename());
    std::sort(out.begin(), out.end());
    return out;
  }
};

// A checksummed file of `size` bytes, every byte `fill`: loading it checks it is whole.
Bytes file_of(char fill, size_t size) {
  ByteWriter w(MAGIC, 1);
  w.put<uint8_t>(static_cast<uint8_t>(fill));
  w.blob(Bytes(size, fill));
  return w.finish();
}

void write(const std::string& path, const Bytes& b) {
  write_file_atomically(path, b.data(), b.size());
}

// Loads `path` and returns its fill byte; throws for a torn or corrupt file.
char load(const std::string& path) {
  const Bytes file = read_file(path, "test");
  ByteReader r(file, MAGIC, 1, path, "test");
  const char fill = static_cast<char>(r.get<uint8_t>("fill"));
  const Bytes body = r.blob("body");
  r.expect_end("body");
  ENGINE_CHECK(std::count(body.begin(), body.end(), fill) == static_cast<long>(body.size()),
               path, ": mixed bytes");
  return fill;
}

std::string error_of(const std::string& path, const Bytes& b) {
  try {
    write(path, b);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

bool is_fifo(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode);
}

}  // namespace

TEST_CASE("atomic write: a FIFO at the path is refused, named, and left a FIFO") {
  Folder folder("fifo");
  const std::string path = folder / "pipe.ckpt";
  REQUIRE(::mkfifo(path.c_str(), 0644) == 0);
  const std::string msg = error_of(path, file_of('a', 100));
  CHECK(msg == "refusing to replace " + path + ": it is a FIFO (named pipe), not a regular file");
  CHECK(is_fifo(path));
  CHECK(folder.names() == std::vector<std::string>{"pipe.ckpt"});  // no temporary left
}

TEST_CASE("atomic write: a directory at the path is refused and left as it was") {
  Folder folder("dir");
  const std::string path = folder / "d.weights";
  fs::create_directory(path);
  std::ofstream(path + "/inside") << "kept";
  const std::string msg = error_of(path, file_of('a', 100));
  CHECK(msg == "refusing to replace " + path + ": it is a directory, not a regular file");
  CHECK(fs::is_directory(path));
  CHECK(fs::exists(path + "/inside"));
  CHECK(folder.names() == std::vector<std::string>{"d.weights"});
}

TEST_CASE("atomic write: a character device at the path is refused and stays a device") {
  // As root the old writer turned `--save /dev/null` into a regular file. As root the test
  // makes its own null device (mknod) rather than risk /dev/null on a regression; without
  // root it uses /dev/null itself, which a regression could not replace.
  Folder folder("device");
  std::string path = "/dev/null";
  if (::geteuid() == 0) {
    path = folder / "null";
    // A container may deny root mknod (no CAP_MKNOD): then the FIFO and directory cases above
    // are this class's only checks here.
    if (::mknod(path.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) {
      MESSAGE("mknod refused (" << std::strerror(errno) << "): the device case is not checked");
      return;
    }
  }
  const std::string msg = error_of(path, file_of('a', 10));
  CHECK(msg == "refusing to replace " + path + ": it is a character device, not a regular file");
  struct stat st;
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  CHECK(S_ISCHR(st.st_mode));
}

TEST_CASE("atomic write: a symbolic link is written through; the link is kept") {
  Folder folder("link");
  fs::create_directory(folder / "real");
  fs::create_directory(folder / "links");
  const std::string target = folder / "real/model.weights";
  write(target, file_of('a', 1000));
  SUBCASE("an absolute link") {
    fs::create_symlink(target, folder / "links/model.weights");
  }
  SUBCASE("a relative link, through a second link") {
    fs::create_symlink("../real/model.weights", folder / "links/hop");
    fs::create_symlink("hop", folder / "links/model.weights");
  }
  const std::string link = folder / "links/model.weights";
  write(link, file_of('b', 2000));
  CHECK(fs::is_symlink(link));
  CHECK(load(target) == 'b');
  CHECK(load(link) == 'b');
  // The temporary was made, and renamed, in the target's folder: nothing left in either.
  CHECK(folder.names() == std::vector<std::string>{"links", "real"});
  std::vector<std::string> real;
  for (const auto& e : fs::directory_iterator(folder / "real")) real.push_back(e.path().filename());
  CHECK(real == std::vector<std::string>{"model.weights"});
}

TEST_CASE("atomic write: a dangling link creates its target; a link to a FIFO is refused") {
  Folder folder("dangling");
  const std::string link = folder / "out.ckpt";
  fs::create_symlink("made.ckpt", link);
  write(link, file_of('c', 10));
  CHECK(fs::is_symlink(link));
  CHECK(load(folder / "made.ckpt") == 'c');

  const std::string fifo = folder / "pipe";
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  const std::string to_fifo = folder / "to_pipe";
  fs::create_symlink(fifo, to_fifo);
  const std::string msg = error_of(to_fifo, file_of('d', 10));
  CHECK(msg == "refusing to replace " + to_fifo + ": it is a symbolic link to " + fifo +
                   ", which is a FIFO (named pipe), not a regular file");
  CHECK(is_fifo(fifo));
  CHECK(fs::is_symlink(to_fifo));

  const std::string loop = folder / "loop";
  fs::create_symlink("loop", loop);
  CHECK(error_of(loop, file_of('e', 10)).find("Too many levels of symbolic links") !=
        std::string::npos);
}

TEST_CASE("atomic write: two writers of one path leave a whole file every time, no temporaries") {
  // Two runs in one folder saving the same checkpoint: with one shared FILE.tmp, one truncated
  // the other's temporary mid-write (a torn file renamed into place, reported as saved) and
  // the other's rename found no temporary. Each writer now has its own.
  Folder folder("race");
  const std::string path = folder / "shared.ckpt";
  write(path, file_of('0', 1));
  std::atomic<int> writers_left{2};
  std::atomic<int> errors{0};
  std::atomic<int> bad_loads{0};
  auto writer = [&](char fill) {
    for (int i = 0; i < 150; ++i) {
      try {
        write(path, file_of(fill, 200000 + static_cast<size_t>(i) * 97));
      } catch (const Error&) {
        ++errors;
      }
    }
    --writers_left;
  };
  std::thread a(writer, 'a');
  std::thread b(writer, 'b');
  int loads = 0;
  while (writers_left > 0) {
    try {
      const char fill = load(path);
      if (fill != '0' && fill != 'a' && fill != 'b') ++bad_loads;
    } catch (const Error&) {
      ++bad_loads;
    }
    ++loads;
  }
  a.join();
  b.join();
  CHECK(errors == 0);
  CHECK(bad_loads == 0);
  CHECK(loads > 0);
  const char last = load(path);
  CHECK((last == 'a' || last == 'b'));
  CHECK(folder.names() == std::vector<std::string>{"shared.ckpt"});
}

TEST_CASE("atomic write: a failed write leaves no temporary and the old file whole") {
  Folder folder("fail");
  const std::string path = folder / "model.weights";
  write(path, file_of('a', 1000));
  SUBCASE("the write itself fails (file size limit: EFBIG)") {
    // RLIMIT_FSIZE makes write() fail part way, as a full disk would; SIGXFSZ ignored so it
    // returns an error rather than killing the test.
    rlimit old{};
    REQUIRE(::getrlimit(RLIMIT_FSIZE, &old) == 0);
    rlimit small = old;
    small.rlim_cur = 100000;
    auto* previous = std::signal(SIGXFSZ, SIG_IGN);
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
    const std::string msg = error_of(path, file_of('b', 500000));
    ::setrlimit(RLIMIT_FSIZE, &old);
    std::signal(SIGXFSZ, previous);
    CHECK(msg == path + ": write failed (File too large)");
  }
  SUBCASE("a name longer than the file system allows") {
    const std::string long_path = folder / std::string(256, 'n');
    CHECK(error_of(long_path, file_of('b', 10)) ==
          long_path + ": cannot open for writing (File name too long: the name is 256 bytes, the "
                      "file system allows 255)");
  }
  SUBCASE("a missing folder") {
    const std::string missing = folder / "missing/x.weights";
    CHECK(error_of(missing, file_of('b', 10)) ==
          missing + ": cannot open for writing (No such file or directory)");
  }
  CHECK(load(path) == 'a');
  CHECK(folder.names() == std::vector<std::string>{"model.weights"});
}

TEST_CASE("atomic write: a name with no room left for the temporary's suffix is written") {
  // 250 bytes is a legal name, but FILE.tmp.XXXXXX would be 261: the old writer refused it
  // ("File name too long"). The temporary's name is now FILE's cut short.
  Folder folder("long_name");
  for (const size_t length : {244, 245, 250, 255}) {
    CAPTURE(length);
    const std::string path = folder / std::string(length, 'n');
    write(path, file_of('a', 1000));
    CHECK(load(path) == 'a');
    write(path, file_of('b', 1000));  // over the first: a temporary beside it, renamed
    CHECK(load(path) == 'b');
    CHECK(folder.names() == std::vector<std::string>{std::string(length, 'n')});
    fs::remove(path);
  }
}

namespace {
std::string check_error(const std::string& path) {
  try {
    check_writable(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("check_writable: refuses before any work what the write would refuse, the same way") {
  Folder folder("check");
  fs::create_directory(folder / "dir");
  std::ofstream(folder / "file") << "kept";
  REQUIRE(::mkfifo((folder / "pipe").c_str(), 0644) == 0);
  fs::create_symlink("pipe", folder / "to_pipe");
  const std::vector<std::string> before = folder.names();
  // Each bad path: check_writable's message is the one write_file_atomically gives.
  const std::vector<std::pair<std::string, std::string>> bad = {
      {folder / "missing/x.json", "cannot open for writing (No such file or directory)"},
      {folder / "file/x.json", "cannot open for writing (Not a directory)"},
      {folder / "dir", "it is a directory, not a regular file"},
      {folder / "pipe", "it is a FIFO (named pipe), not a regular file"},
      {folder / "to_pipe", "which is a FIFO (named pipe), not a regular file"},
      {folder / std::string(256, 'n'), "File name too long: the name is 256 bytes"},
  };
  for (const auto& path_and_reason : bad) {
    const std::string& path = path_and_reason.first;
    CAPTURE(path);
    const std::string checked = check_error(path);
    CHECK(checked.find(path_and_reason.second) != std::string::npos);
    CHECK(checked.find(path) != std::string::npos);
    CHECK(checked == error_of(path, file_of('a', 10)));
  }
  // Writable paths pass and nothing changes: no file made, none replaced, no temporary left.
  CHECK(check_error(folder / "new.json") == "");
  CHECK(check_error(folder / "file") == "");
  CHECK(check_error(folder / std::string(255, 'n')) == "");
  CHECK(folder.names() == before);
  std::ifstream kept(folder / "file");
  CHECK(std::string(std::istreambuf_iterator<char>(kept), {}) == "kept");
}

TEST_CASE("check_writable: a folder the user may not write to is refused, with the reason") {
  if (::geteuid() == 0) {
    MESSAGE("running as root, which may write anywhere: the permission case is not checked");
    return;
  }
  Folder folder("read_only");
  fs::create_directory(folder / "ro");
  fs::permissions(folder / "ro", fs::perms::owner_read | fs::perms::owner_exec);
  const std::string path = folder / "ro/x.json";
  CHECK(check_error(path) == path + ": cannot open for writing (Permission denied)");
  fs::permissions(folder / "ro", fs::perms::owner_all);
}
