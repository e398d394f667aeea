// The apps' command lines: Flags, the flags and options of one app (a thin face of CLI11's App,
// which only app_flags.cpp includes: <CLI/CLI.hpp> costs every file that includes it ~10 s of
// compiling, its parsing and its validators' code, so the apps, their helpers and the common
// flags below see only this);
// the flags every app registers (docs/USING.md); run_app, which parses them and turns errors
// into one line and an exit status; and the range checks of every numeric flag.
#pragma once
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "apps/common/app_options.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace engine::apps {

// The range a numeric flag's value must lie in, as its type T holds it (see finite_in and the
// others below). The flag's text is converted to T exactly as CLI11 converts it and checked:
// NaN and infinity are refused, a float that overflows a float (1e39) is refused, and so is an
// integer the conversion would saturate ("-1" or 2^64 for a uint64_t). A refusal reads
// "--flag: Value TEXT not in range ..." (run_app: one line, status 2). CLI11's own Range and
// PositiveNumber let NaN through and check floats as doubles: hence these.
template <typename T>
struct NumberCheck {
  enum class Shown { Range, Positive, NonNegative, Nothing };  // what --help says of it
  T lo, hi;
  bool lo_open;  // lo itself refused
  Shown shown;
};

// A number in [lo, hi]: help shows "INT in [lo - hi]", as CLI::Range does.
template <typename T>
NumberCheck<T> finite_in(T lo, T hi) {
  return {lo, hi, false, NumberCheck<T>::Shown::Range};
}
// Above zero: (0, max] for a float or double, [1, max] for an integer.
template <typename T>
NumberCheck<T> positive_number() {
  return {T{0}, std::numeric_limits<T>::max(), true, NumberCheck<T>::Shown::Positive};
}
// [0, max].
template <typename T>
NumberCheck<T> non_negative_number() {
  return {T{0}, std::numeric_limits<T>::max(), false, NumberCheck<T>::Shown::NonNegative};
}
// Any value T holds, nothing else (a seed: no "-1", no 2^64, no NaN); help adds nothing.
template <typename T>
NumberCheck<T> any_number() {
  return {std::numeric_limits<T>::lowest(), std::numeric_limits<T>::max(), false,
          NumberCheck<T>::Shown::Nothing};
}

// One registered flag or option; each call returns it again, so they chain.
class Flag {
 public:
  explicit Flag(CLI::Option* option) : option_(option) {}
  // The value (each value of a list) within `range`; T is the option's number type
  // (int, int64_t, uint64_t, float or double).
  template <typename T>
  Flag& check(const NumberCheck<T>& range);
  // The value refused where `check` returns a message (which the error line then shows).
  Flag& check_with(const std::function<std::string(const std::string&)>& check);
  // The value names a file that exists.
  Flag& existing_file();
  // The value (each value of a list) one of `choices`.
  Flag& one_of(const std::vector<std::string>& choices);
  // A list option takes "a,b,c" as well as repeated flags.
  Flag& delimiter(char separator);
  // What --help shows as the default, in words ("every usable one").
  Flag& default_text(const std::string& text);
  // Refused together with `other` (both ways).
  Flag& excludes(const Flag& other);
  // An integer option also takes "1e7" or "2.5e6" (a whole number; "1.5" stays an error).
  Flag& exponent_notation();
  // Refused without `other`.
  Flag& needs(const Flag& other);
  // An error when the command line leaves it out.
  Flag& required();

 private:
  CLI::Option* option_;
};

// The flags and options of one app. --help shows each option's default ("--epochs INT=10"),
// taken from the variable's value when run_app parses, unless default_text named it in words.
class Flags {
 public:
  Flags(const std::string& description, const std::string& name);
  ~Flags();
  Flags(const Flags&) = delete;
  Flags& operator=(const Flags&) = delete;

  // --name sets `value` to true.
  Flag flag(const std::string& name, bool& value, const std::string& help);
  // --name calls `set` (a pair of flags that set one choice, as --fused and --no-fused).
  Flag flag(const std::string& name, std::function<void()> set, const std::string& help);
  // --name VALUE into `value`: T is int, int64_t, uint64_t, float, double, std::string, or a
  // std::vector of int or std::string (the option then repeats, or takes a delimiter's list).
  template <typename T>
  Flag option(const std::string& name, T& value, const std::string& help);

  // The flag or option registered as `name` (its first long name, "--profile").
  Flag find(const std::string& name);
  // Replaces the help of option `name` (a common one whose meaning this app narrows).
  void describe(const std::string& name, const std::string& help);
  // Text --help prints after the options.
  void footer(const std::string& text);
  // Whether option `name` was on the command line (after run_app parsed it).
  bool given(const std::string& name) const;
  const std::string& name() const;
  // The CLI11 App behind it, for app_flags.cpp.
  CLI::App& cli() { return *app_; }

 private:
  std::unique_ptr<CLI::App> app_;
};

// Registers the common flags of a training app, checkpoints and NaN checks included;
// `datasets` lists the values --dataset accepts.
void add_common_flags(Flags& flags, CommonOptions& options, const std::vector<std::string>& datasets);
// Only the flags of an app that trains nothing: --device, --cpu, --gpu, --tf32, --seed,
// --threads, --json, --log-level, --profile, --sync-check (add_common_flags adds these too).
void add_device_flags(Flags& flags, CommonOptions& options);

// Parses argv and runs `body`; after a successful body, prints the --profile table of every
// profiled device. Flag errors, UsageError and DeviceError (no usable GPU, out of
// device memory) print one line and return 2; Interrupted prints its line and returns
// 128 + its signal; any other engine::Error prints one line and returns 1; --help prints
// help and returns 0. Each of those lines, and every log message, is printed as
// core/logging.h's printable() makes it: a path with a newline or an escape code in it cannot
// split the line or drive the terminal.
int run_app(Flags& flags, int argc, char** argv, const std::function<int()>& body);

}  // namespace engine::apps
