// One exception type for everything the engine refuses to do, and the macro that throws it.
// Messages name what went wrong and where, so a user can act on one line of output.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

namespace engine {

// Thrown for bad input (shapes, files, flags) and for failed backend calls.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The device itself cannot do what was asked: no usable GPU, a driver too old, out of device
// memory, a fault inside a kernel. Apps exit with status 2 on it, like a bad flag: the
// run cannot go on as asked, and the one line says which of these it was.
class DeviceError : public Error {
 public:
  using Error::Error;
};

namespace detail {
template <typename... Parts>
std::string concat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}
}  // namespace detail

}  // namespace engine

// ENGINE_CHECK(cond, "message parts", ...): throw engine::Error when cond is false.
// The message is built only on failure, so checks cost one branch in hot code.
#define ENGINE_CHECK(cond, ...)                                            \
  do {                                                                     \
    if (!(cond)) throw ::engine::Error(::engine::detail::concat(__VA_ARGS__)); \
  } while (0)
