// The engine logs through spdlog; apps set the level from --log-level. And the one place that
// makes outside text (a path, a name read from a file) safe to print in a message.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace engine {

// Accepts trace, debug, info, warn, error, critical, off; throws engine::Error otherwise.
void set_log_level(const std::string& level);

// `text` made safe for one line of an error, a warning or a list: control characters escaped as
// C writes them (\n, \t, \r; the others as \xNN, so ESC is \x1b and cannot drive the terminal),
// and bytes that are not UTF-8 as \xNN; everything else, letters of any script included, as it
// is. A file name with a newline in it then keeps its message on one line. (A backslash stays as
// it is: the result is for reading, not for parsing back.)
std::string printable(std::string_view text);
// The same of the first `limit` bytes of `text`, with "..." after a text cut short: a name or a
// header a reader quotes in its message stays short.
std::string printable(std::string_view text, size_t limit);

// `text` with each byte that is not part of a well-formed UTF-8 sequence written as the four
// characters \xNN: valid UTF-8 (as a JSON string must be) that still shows the byte. Valid text,
// control characters included, is returned as it is.
std::string valid_utf8(std::string_view text);

// From now on, every message of spdlog's default logger is printed as printable() makes it.
// run_app (apps/common/app_flags.h) calls it first; calling it again changes nothing.
void print_log_messages_printable();

}  // namespace engine
