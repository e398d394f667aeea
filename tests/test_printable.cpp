// Issue 24, class 7 (any bytes in a name) and the text side of class 3 (every write checked):
// printable() keeps a message on one line whatever a path holds, the log prints through it,
// write_json writes a record whose strings are not UTF-8 instead of throwing at a run's end, and
// a text file whose write fails says so and leaves the previous file whole.
#include <doctest/doctest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "apps/common/app_options.h"
#include "core/error.h"
#include "core/logging.h"

using namespace engine;
namespace fs = std::filesystem;

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A fresh folder for one test case, removed at the end.
struct Folder {
  fs::path dir =
      fs::temp_directory_path() / ("engine_test_printable_" + std::to_string(::getpid()));
  Folder() {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Folder() {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& entry : fs::directory_iterator(dir)) out.push_back(entry.path().filename());
    std::sort(out.begin(), out.end());
    return out;
  }
};

}  // namespace

TEST_CASE("printable: control characters and bytes that are not UTF-8 are escaped, text kept") {
  CHECK(printable("data/a\nb.jpg") == "data/a\\nb.jpg");
  CHECK(printable("tab\there\rcr") == "tab\\there\\rcr");
  CHECK(printable("\x1b[31mred") == "\\x1b[31mred");  // an escape code cannot colour the terminal
  CHECK(printable(std::string("nul\0del\x7f", 8)) == "nul\\x00del\\x7f");
  CHECK(printable("caf\xe9") == "caf\\xe9");              // Latin-1, not UTF-8
  CHECK(printable("\xe2\x82") == "\\xe2\\x82");           // a sequence cut short
  CHECK(printable("\xc0\xaf") == "\\xc0\\xaf");           // an overlong '/'
  CHECK(printable("\xed\xa0\x80") == "\\xed\\xa0\\x80");  // a surrogate
  CHECK(printable("\xf4\x90\x80\x80") == "\\xf4\\x90\\x80\\x80");  // above U+10FFFF
  CHECK(printable("csi \xc2\x9b") == "csi \\xc2\\x9b");  // C1 control U+009B
  // Letters of any script, symbols and a backslash stay as they are.
  const std::string text = "caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80 \xc2\xa0 C:\\dir";
  CHECK(printable(text) == text);
  CHECK(printable("") == "");
}

TEST_CASE("printable with a limit: the first bytes escaped, \"...\" after a text cut short") {
  CHECK(printable("abc", 3) == "abc");
  CHECK(printable("abcd", 3) == "abc...");
  CHECK(printable("a\tb\nc", 4) == "a\\tb\\n...");
  // A cut through a UTF-8 character leaves a byte that is not UTF-8 on its own: escaped.
  CHECK(printable("\xc3\xa9t\xc3\xa9", 4) == "\xc3\xa9t\\xc3...");
}

TEST_CASE("valid_utf8: only the bytes that are not UTF-8 are escaped") {
  CHECK(valid_utf8("data/caf\xe9/x") == "data/caf\\xe9/x");
  CHECK(valid_utf8("a\nb\x1b") == "a\nb\x1b");  // JSON escapes these itself
  CHECK(valid_utf8("caf\xc3\xa9") == "caf\xc3\xa9");
  CHECK(valid_utf8("\xff\xfe") == "\\xff\\xfe");
}

TEST_CASE("log messages are printed printable: a path with a newline stays on one line") {
  std::ostringstream out;
  const std::shared_ptr<spdlog::logger> previous = spdlog::default_logger();
  auto logger = std::make_shared<spdlog::logger>(
      "test", std::make_shared<spdlog::sinks::ostream_sink_mt>(out));
  logger->set_pattern("%l: %v");
  spdlog::set_default_logger(logger);
  print_log_messages_printable();
  print_log_messages_printable();  // twice changes nothing: each message escaped once
  spdlog::warn("could not cache the device peaks in {}: {}", "/tmp/a\nb\x1b[2J", "full");
  spdlog::set_default_logger(previous);
  CHECK(out.str() == "warning: could not cache the device peaks in /tmp/a\\nb\\x1b[2J: full\n");
}

TEST_CASE("write_json: a record holding bytes that are not UTF-8 is written, escaped, not lost") {
  // Before, nlohmann's dump threw type_error 316 at the end of the run and the record was lost.
  Folder folder;
  const std::string path = (folder.dir / "run.json").string();
  nlohmann::json record = {{"data", "data/caf\xe9\nx"}, {"list", {"ok", "\xff"}}, {"seed", 42}};
  record["key \xfe"] = true;
  REQUIRE_NOTHROW(apps::write_json(path, record));
  const nlohmann::json read = nlohmann::json::parse(read_text(path));
  CHECK(read["data"] == "data/caf\\xe9\nx");
  CHECK(read["list"] == nlohmann::json({"ok", "\\xff"}));
  CHECK(read["key \\xfe"] == true);
  CHECK(read["seed"] == 42);
  CHECK(folder.names() == std::vector<std::string>{"run.json"});
}

TEST_CASE("write_text_file: a write that fails (a full disk) throws, the previous file stays") {
  // A CSV written to a full disk used to print "Wrote" and leave 0 bytes. RLIMIT_FSIZE makes
  // write() fail as a full disk would (EFBIG; SIGXFSZ ignored so the test is not killed).
  Folder folder;
  const std::string path = (folder.dir / "table.csv").string();
  apps::write_text_file(path, "a,b\n1,2\n");
  rlimit old{};
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &old) == 0);
  rlimit small = old;
  small.rlim_cur = 4096;
  auto* previous = std::signal(SIGXFSZ, SIG_IGN);
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
  std::string message;
  try {
    apps::write_text_file(path, std::string(100000, 'x'));
  } catch (const Error& e) {
    message = e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, previous);
  CHECK(message == path + ": write failed (File too large)");
  CHECK(read_text(path) == "a,b\n1,2\n");
  CHECK(folder.names() == std::vector<std::string>{"table.csv"});
}
