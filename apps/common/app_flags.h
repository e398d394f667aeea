// The flags every app registers with CLI11 (docs/USING.md), run_app, which parses them and turns
// errors into one line and an exit status, and the range checks of every numeric flag. Apart
// from app_options.h because CLI11 costs every file that includes it ~8 s of compiling: the files
// that only need CommonOptions, the --json record or write_text_file include app_options.h alone.
#pragma once
#include <CLI/CLI.hpp>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "apps/common/app_options.h"

namespace engine::apps {

// Registers the common flags of a training app, checkpoints and NaN checks included;
// `datasets` lists the values --dataset accepts.
void add_common_flags(CLI::App& app, CommonOptions& options,
                      const std::vector<std::string>& datasets);
// Only the flags of an app that trains nothing: --device, --cpu, --gpu, --tf32, --seed,
// --threads, --json, --log-level, --profile, --sync-check (add_common_flags adds these too).
void add_device_flags(CLI::App& app, CommonOptions& options);

// Parses argv and runs `body`; after a successful body, prints the --profile table of every
// profiled device. Flag errors, UsageError and DeviceError (no usable GPU, out of
// device memory) print one line and return 2; Interrupted prints its line and returns
// 128 + its signal; any other engine::Error prints one line and returns 1; --help prints
// help and returns 0. Each of those lines, and every log message, is printed as
// core/logging.h's printable() makes it: a path with a newline or an escape code in it cannot
// split the line or drive the terminal.
int run_app(CLI::App& app, int argc, char** argv, const std::function<int()>& body);

// Lets an integer option take "1e7" or "2.5e6" as well as "10000000" (the value must be a whole
// number; "1.5" stays an error). Call it on the option before its range check runs: a transform
// runs before every check whenever it was added.
CLI::Option* accept_exponent_notation(CLI::Option* option);

// Range checks for numeric flags (every numeric flag of every app uses one; issue 24). The
// flag's text is converted to T, the type the flag is stored in, exactly as CLI11 converts it,
// and the value checked: NaN and infinity are refused, a float that overflows a float (1e39) is
// refused, and so is an integer the conversion would saturate ("-1" or 2^64 for a uint64_t).
// A refusal reads "--flag: Value TEXT not in range ..." (run_app: one line, status 2). CLI11's
// own Range and PositiveNumber let NaN through and check floats as doubles: use these instead.
namespace detail {
// The conversions CLI11 makes (strtoll/strtoull base 0, strtold then a cast), refusing what
// CLI11 lets through: trailing text, saturation, a value the type does not hold, NaN, infinity.
bool parse_number(const std::string& text, int* value);
bool parse_number(const std::string& text, long* value);
bool parse_number(const std::string& text, long long* value);
bool parse_number(const std::string& text, unsigned long* value);
bool parse_number(const std::string& text, unsigned long long* value);
bool parse_number(const std::string& text, float* value);
bool parse_number(const std::string& text, double* value);

template <typename T>
std::string number_string(T value) {
  std::ostringstream out;
  out << +value;
  return out.str();
}

template <typename T>
CLI::Validator number_check(T lo, T hi, bool lo_open, std::string description) {
  static_assert(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>, "a numeric flag");
  std::string range = (lo_open ? "(" : "[") + number_string(lo) + " to " + number_string(hi) + "]";
  if (std::is_floating_point_v<T>) range += std::is_same_v<T, float> ? " of a finite float" : " of a finite double";
  return CLI::Validator(
      [lo, hi, lo_open, range](std::string& text) -> std::string {
        T value{};
        if (!parse_number(text, &value) || value < lo || value > hi || (lo_open && value == lo)) {
          return "Value " + text + " not in range " + range;
        }
        return {};
      },
      std::move(description));
}
}  // namespace detail

// A number in [lo, hi], as T: help shows "INT in [lo - hi]", as CLI::Range.
template <typename T>
CLI::Validator finite_in(T lo, T hi) {
  return detail::number_check(lo, hi, false,
                              std::string(CLI::detail::type_name<T>()) + " in [" + detail::number_string(lo) +
                                  " - " + detail::number_string(hi) + "]");
}
// Above zero: (0, max] for a float or double, [1, max] for an integer.
template <typename T>
CLI::Validator positive_number() {
  return detail::number_check(T{0}, std::numeric_limits<T>::max(), true, "POSITIVE");
}
// [0, max].
template <typename T>
CLI::Validator non_negative_number() {
  return detail::number_check(T{0}, std::numeric_limits<T>::max(), false, "NONNEGATIVE");
}
// Any value T holds, nothing else (a seed: no "-1", no 2^64, no NaN); help adds nothing.
template <typename T>
CLI::Validator any_number() {
  return detail::number_check(std::numeric_limits<T>::lowest(), std::numeric_limits<T>::max(), false, "");
}

// --help shows each option's default ("--epochs INT=10"); run_app calls it before parsing.
// Options whose default reads better in words set default_str("...") and keep it.
void show_defaults_in_help(CLI::App& app);

}  // namespace engine::apps
