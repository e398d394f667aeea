// jacobian(f, x): the full Jacobian of a tensor function, shape f(x).shape + x.shape, as
// torch.autograd.functional.jacobian returns it: J[o..., i...] = d f(x)[o...] / d x[i...].
//
// f is recorded once on x (a copy of it that requires grad), and the recorded graph is then
// swept with many directions at a time (core/linearize.h). Strategies:
//   loop     one backward pass per output element, f(x).numel() of them: what PyTorch's
//            jacobian() does by default, kept to show why it is slow (progress bar, and an
//            estimate of the total after the first passes that a caller can refuse).
//   reverse  batched vector-Jacobian products: a chunk of K one-hot cotangents goes back
//            through the graph at once, so K rows of J cost about one (fat) backward pass.
//   forward  batched Jacobian-vector products (Node::jvp rules): a chunk of K one-hot tangents
//            goes forward at once and gives K columns of J. Best when x has fewer elements
//            than f(x).
// Per-sample (rowwise = true, declared by the caller): f maps row n of x to row n of f(x) and
// nothing else (an MLP on a batch), so J is block diagonal: J[n, o, m, i] = 0 for m != n. The
// one-hot vectors then get a 1 in *every* row at once: I = x.numel() / N forward directions
// (or O = f(x).numel() / N reverse ones) give every block. The seed MLP (val x 1 -> val x 400)
// needs a single forward direction. The dense J is still built (zeros and the blocks on the
// diagonal) unless `blocks` asks for the blocks alone, (N, *out_row, *in_row).
//
// Auto picks per-sample when rowwise is declared, else dense; then forward when it needs no
// more directions than reverse and every op on the path has a forward rule, else reverse.
// Declaring rowwise for an f that mixes rows gives a wrong J: it is the caller's promise.
//
// Memory: the reverse and forward strategies run in chunks of K directions, K chosen so that
// a chunk's working set (seeds, tangents or cotangents, and every op's temporaries; not the
// result, nor the forward pass recorded once) stays within memory_limit. The first chunk runs
// one direction and its measured working set (allocator peak above the bytes in use when it
// began) sizes the others: every allocation of a sweep is either proportional to K or
// constant, so K directions never need more than K times one. A limit below one direction's
// needs still runs, one direction per chunk. The call resets the allocator's peak statistic.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>

#include "core/tensor.h"

namespace engine::nn {

enum class JacobianMode { Auto, Loop, Reverse, Forward };
const char* to_string(JacobianMode mode);  // "auto", "loop", "reverse", "forward"

// What the loop measured over its first passes, before it commits to the rest.
struct LoopEstimate {
  int64_t passes = 0;        // all of them: one per output element
  int64_t timed_passes = 0;  // after one untimed warm-up pass
  double seconds_per_pass = 0.0;
  double total_seconds = 0.0;  // estimated, every pass
};

struct JacobianOptions {
  JacobianMode mode = JacobianMode::Auto;
  bool rowwise = false;  // f maps row n of x to row n of f(x) only (see above)
  bool blocks = false;   // with rowwise: return only the diagonal blocks, (N, *out_row, *in_row)
  size_t memory_limit = size_t{1} << 30;  // bytes for one chunk's working set (see above)
  // Loop only. `progress`: where a Keras-style progress bar goes (none when null).
  // `confirm_loop`: asked with the estimate after the first passes; false stops the loop,
  // and jacobian() returns an undefined tensor (stats->completed = false).
  std::ostream* progress = nullptr;
  std::function<bool(const LoopEstimate&)> confirm_loop;
};

struct JacobianStats {
  std::string strategy;  // "forward, per-sample", "reverse, dense", "loop", ...
  bool completed = true;
  int64_t directions = 0;  // one-hot vectors pushed through the graph (loop: backward passes)
  int64_t chunks = 0;
  int64_t directions_per_chunk = 0;  // the largest chunk
  size_t working_set_bytes = 0;      // the largest chunk's measured working set
  size_t result_bytes = 0;
  size_t peak_bytes = 0;  // allocator peak during the call, above what was in use before it
  LoopEstimate loop;      // loop only
};

// Before J is allocated, jacobian() checks what it will take beside the recorded forward pass
// against the free memory of x's device (check_jacobian_memory), and refuses with the estimate
// and what to change (DeviceError) rather than an allocator's error.
Tensor jacobian(const std::function<Tensor(const Tensor&)>& f, const Tensor& x,
                const JacobianOptions& options = {}, JacobianStats* stats = nullptr);

// What jacobian() allocates beside the recorded forward pass, for x and f(x) of these shapes,
// that can be known before it runs: J (the blocks alone with options.blocks), and for the loop
// with options.blocks the dense J it takes them from. (A chunk's working set comes on top: up
// to options.memory_limit, often far less, so it is not counted.) Sizes too large for a size_t
// are the largest one.
struct JacobianMemory {
  size_t result = 0;  // J as returned
  size_t dense = 0;   // the loop's dense J beside the blocks (0 otherwise)
  size_t total() const;
};
JacobianMemory estimate_jacobian_memory(const Shape& x_shape, const Shape& y_shape,
                                        const JacobianOptions& options);
// Throws DeviceError, one line (nn/memory_estimate.h, check_memory), when that does not fit
// the free memory of `device`: "needs ~1.56 PiB of host memory for J of shape (1048576, 400,
// 1048576, 1) (J 1.56 PiB), the host has ...: the diagonal blocks alone (--blocks) take 1.56
// GiB; or fewer rows of x (--val)". jacobian() calls it once f is recorded; a caller that knows
// the shapes calls it first, before it makes x or records anything (apps/jacobian_mlp.cpp does).
void check_jacobian_memory(const Shape& x_shape, const Shape& y_shape,
                           const JacobianOptions& options, Device device);

}  // namespace engine::nn
