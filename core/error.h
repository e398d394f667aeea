// One exception type for everything the engine refuses to do, and the macro that throws it.
// Messages name what went wrong and where, so a user can act on one line of output.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace engine {

// Thrown for bad input (shapes, files, flags) and for failed device calls.
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

// A failed CUDA call (kernels/cuda_check.h), with its parts kept apart so that --sync-check
// (core/sync_check.h) can say them again next to the op it was in. what() is the whole line.
class CudaError : public DeviceError {
 public:
  CudaError(const std::string& message, std::string error, std::string kernel, bool fault)
      : DeviceError(message), error_(std::move(error)), kernel_(std::move(kernel)), fault_(fault) {}
  // CUDA's words and the error's name: "an illegal memory access was encountered
  // (cudaErrorIllegalAddress)".
  const std::string& error() const { return error_; }
  // The kernel it is laid at: the failed launch itself, or for a fault the last kernel launched
  // before it was seen ("strided_copy_kernel launched at kernels/strided_copy.cu:92"); empty
  // when no launch was recorded.
  const std::string& kernel() const { return kernel_; }
  // The device faulted inside a kernel (an illegal address, a launch failure...): the CUDA
  // context is lost and every later CUDA call of the process fails the same way.
  bool fault() const { return fault_; }

 private:
  std::string error_, kernel_;
  bool fault_;
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
