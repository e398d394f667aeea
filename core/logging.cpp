#include "core/logging.h"

#include <spdlog/sinks/sink.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <memory>
#include <utility>

#include "core/error.h"

namespace engine {

void set_log_level(const std::string& level) {
  const spdlog::level::level_enum parsed = spdlog::level::from_str(level);
  // from_str maps every unknown name to "off"; only accept "off" when it was asked for.
  ENGINE_CHECK(parsed != spdlog::level::off || level == "off", "unknown log level '", level,
               "' (use trace, debug, info, warn, error, critical or off)");
  spdlog::set_level(parsed);
}

namespace {

// The length of the well-formed UTF-8 sequence that starts at text[at] (1 to 4), or 0 where
// none does: a stray continuation byte, a sequence cut short, an overlong form, a surrogate or
// a code point above U+10FFFF (the table of well-formed sequences in the Unicode standard, 3.9).
size_t utf8_length_at(std::string_view text, size_t at) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(at);
  if (lead < 0x80) return 1;
  size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // the range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;   // no overlong forms
    if (lead == 0xED) high = 0x9F;  // no surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;   // no overlong forms
    if (lead == 0xF4) high = 0x8F;  // nothing above U+10FFFF
  } else {
    return 0;
  }
  if (text.size() - at < length || byte(at + 1) < low || byte(at + 1) > high) return 0;
  for (size_t i = 2; i < length; ++i) {
    if ((byte(at + i) & 0xC0) != 0x80) return 0;
  }
  return length;
}

// A control character: C0 (below a space), DEL, or C1 (U+0080 to U+009F, which some terminals
// obey as well).
bool is_control(std::string_view sequence) {
  const auto lead = static_cast<unsigned char>(sequence[0]);
  if (sequence.size() == 1) return lead < 0x20 || lead == 0x7F;
  return sequence.size() == 2 && lead == 0xC2 && static_cast<unsigned char>(sequence[1]) < 0xA0;
}

void append_escaped(std::string& out, unsigned char byte) {
  switch (byte) {
    case '\n': out += "\\n"; return;
    case '\t': out += "\\t"; return;
    case '\r': out += "\\r"; return;
    default: {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02x", byte);
      out += hex;
    }
  }
}

// `text` with every byte of an ill-formed sequence escaped, and every byte of each well-formed
// one that `escape` picks.
template <typename Escape>
std::string escape_sequences(std::string_view text, Escape escape) {
  std::string out;
  out.reserve(text.size());
  for (size_t at = 0; at < text.size();) {
    const size_t length = utf8_length_at(text, at);
    const std::string_view sequence = text.substr(at, length == 0 ? 1 : length);
    if (length == 0 || escape(sequence)) {
      for (const char c : sequence) append_escaped(out, static_cast<unsigned char>(c));
    } else {
      out += sequence;
    }
    at += sequence.size();
  }
  return out;
}

// A sink that prints each message through another sink, printable().
class PrintableSink final : public spdlog::sinks::sink {
 public:
  explicit PrintableSink(spdlog::sink_ptr inner) : inner_(std::move(inner)) {}
  void log(const spdlog::details::log_msg& message) override {
    if (!inner_->should_log(message.level)) return;
    const std::string text = printable({message.payload.data(), message.payload.size()});
    spdlog::details::log_msg escaped = message;
    escaped.payload = spdlog::string_view_t(text.data(), text.size());
    inner_->log(escaped);
  }
  void flush() override { inner_->flush(); }
  void set_pattern(const std::string& pattern) override { inner_->set_pattern(pattern); }
  void set_formatter(std::unique_ptr<spdlog::formatter> formatter) override {
    inner_->set_formatter(std::move(formatter));
  }

 private:
  spdlog::sink_ptr inner_;
};

}  // namespace

std::string printable(std::string_view text) { return escape_sequences(text, is_control); }

std::string printable(std::string_view text, size_t limit) {
  return text.size() <= limit ? printable(text) : printable(text.substr(0, limit)) + "...";
}

std::string valid_utf8(std::string_view text) {
  return escape_sequences(text, [](std::string_view) { return false; });
}

void print_log_messages_printable() {
  for (spdlog::sink_ptr& sink : spdlog::default_logger()->sinks()) {
    if (!std::dynamic_pointer_cast<PrintableSink>(sink)) {
      sink = std::make_shared<PrintableSink>(sink);
    }
  }
}

}  // namespace engine
