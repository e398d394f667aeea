// The op interface, declared once. Each backend (cpu/ with OpenBLAS + OpenMP, kernels/ with
// hand-written CUDA) implements every method with this exact signature, so a test can run
// the same op on two backends and compare, and nn/ never knows which one runs.
//
// Conventions for every op:
//  - all tensors are contiguous and live on this backend's device;
//  - outputs are allocated by the caller (the op front-ends in core/ops_*.cpp; nn/ for
//    optimizer state and metrics) with the right shape and dtype;
//  - shapes are checked by the caller; a backend may assume them (augment_images aside).
// An op is declared here and implemented in cpu/<file>.cpp and kernels/<file>.cu, the file
// named after the op or its family (matmul, softmax, dropout, conv2d, pool, optimizers,
// reduce: sum and count_correct, random: random_normal, gather: gather_rows, ...), except:
//   op                             cpu/               kernels/
//   fill                           cpu_backend.cpp    elementwise.cu
//   binary, axpby                  elementwise.cpp    elementwise.cu
//   bias_activation_*, sum_rows    elementwise.cpp    activation.cu
//   broadcast_scalar               reduce.cpp         elementwise.cu
//   increment                      optimizers.cpp     elementwise.cu
// On the GPU, matmul and the convolutions also use kernels/matmul/ and kernels/conv/, and
// --device cudnn (set_vendor_libraries) hands them and pooling to kernels/vendor/.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/allocator.h"
#include "core/conv_geometry.h"
#include "core/device.h"
#include "core/tensor.h"

namespace engine {

enum class Activation { None, Relu, Tanh, Sigmoid, Softmax };
enum class BinaryOp { Add, Sub, Mul };

// Adam's hyper-parameters. The step number t is not here: it is read from a counter on the
// device (see `step` below), so that a captured CUDA graph replays correct updates.
struct AdamConfig {
  float learning_rate;
  float beta1;
  float beta2;
  float epsilon;
};

// Keras' Adam step size for step t (1-based), in double: lr * sqrt(1 - b2^t) / (1 - b1^t).
// Every backend folds the bias corrections in with this one function.
double adam_step_size(const AdamConfig& config, int64_t t);

// A 3-D walk over a tensor's elements, counted in elements from the tensor's start: step
// (i, j, k) of the walk is element offset + i * stride[0] + j * stride[1] + k * stride[2].
// Strides may be 0 (every step of that axis visits the same element) and need not describe a
// contiguous layout: transposes, diagonals and broadcasts are all walks (see strided_copy).
struct Walk3d {
  int64_t offset = 0;
  std::array<int64_t, 3> stride{};
};

class StepGraph;

// How much memory a device has left for this process (Backend::memory_info), in bytes.
struct DeviceMemory {
  // What new tensors can still get: memory nobody holds, plus the blocks this process's
  // caching allocator keeps for reuse.
  size_t free_bytes = 0;
  size_t total_bytes = 0;  // the device's whole memory; 0 where the backend cannot tell
  bool known() const { return total_bytes > 0; }
};

// What a device does at best, measured on it: the denominators of every "% of peak" in a
// profile (core/profiler.h).
struct MeasuredPeaks {
  double flops_per_s = 0.0;     // FP32 multiply-adds (2 FLOPs each) per second
  double bytes_per_s = 0.0;     // memory copy bandwidth, bytes read + written
  double launch_seconds = 0.0;  // the floor under one op: a kernel launch, or waking threads
  // Copies between pinned host memory and the device, each way (bytes moved per second); 0
  // where there is no such copy (the CPU backend).
  double host_to_device_bytes_per_s = 0.0;
  double device_to_host_bytes_per_s = 0.0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual Device device() const = 0;
  virtual std::string name() const = 0;  // e.g. "cpu (16 threads, OpenBLAS 0.3.21 ...)"

  // ---- memory ------------------------------------------------------------------------
  virtual CachingAllocator& allocator() = 0;
  virtual void copy_from_host(void* dst, const void* src, size_t bytes) = 0;
  virtual void copy_to_host(void* dst, const void* src, size_t bytes) = 0;
  virtual void copy_within(void* dst, const void* src, size_t bytes) = 0;
  virtual void synchronize() = 0;
  // Free and total memory (cudaMemGetInfo on a GPU; MemAvailable and MemTotal of the host on
  // the CPU); unknown (total 0) by default. The training apps' pre-flight check compares it
  // with nn/memory_estimate.h's estimate.
  virtual DeviceMemory memory_info() { return {}; }

  // ---- input prefetch (datasets/image_batches.h) ----------------------------------------
  // Page-locked host memory, which the device can copy from while the host works on (plain
  // memory on the CPU). Throws DeviceError when the host has none left.
  virtual void* allocate_pinned(size_t bytes) = 0;
  virtual void free_pinned(void* pointer) = 0;
  // Enqueues a copy of `bytes` from pinned host memory `src` to `dst` behind the work already
  // queued, and returns at once (the CPU copies now). `src` must stay unchanged until a fence
  // recorded after this call is reached.
  virtual void copy_from_pinned_async(void* dst, const void* src, size_t bytes) = 0;
  // A mark behind everything queued so far; fence_wait blocks the host until the device has
  // reached it. Fences are reused: at most one wait per fence.
  virtual uint64_t record_fence() = 0;
  virtual void fence_wait(uint64_t fence) = 0;
  // Whether the device has reached `fence`, without waiting.
  virtual bool fence_reached(uint64_t fence) = 0;

  // ---- measurement (core/profiler.h) ---------------------------------------------------
  // A timestamp in the device's order of work (a CUDA event; the host clock on the CPU).
  virtual uint64_t record_timer() = 0;
  // Seconds from timer `start` to timer `end`; waits until the device has reached `end`.
  virtual double timer_seconds(uint64_t start, uint64_t end) = 0;
  // Forgets every timer, so their ids and events can be used again.
  virtual void reset_timers() = 0;
  // Runs short probes (~0.1-0.5 s) of the FP32 rate, copy bandwidth and launch floor.
  virtual MeasuredPeaks measure_peaks() = 0;

  // Matmuls on TF32 tensor cores (10-bit mantissa, ~1e-3 relative error) instead of FP32.
  // Off by default: the articles compute in FP32. Backends without TF32 ignore it.
  virtual void set_tf32(bool enabled) { (void)enabled; }
  // Op family -> the kernels it runs on this device in the current mode, for the run header
  // and --json ("matmul" -> "TF32 mma.sync ..."); chosen on a GPU by core/gpu_architecture.h.
  virtual std::vector<std::pair<std::string, std::string>> kernel_families() const { return {}; }
  // --device cudnn: matmul on cuBLAS, convolutions and pooling on cuDNN, everything else on
  // the engine's own kernels: the articles' "GPU + cuDNN" column and the yardstick for our
  // kernels. Off by default; backends without vendor libraries refuse it (engine::Error).
  virtual void set_vendor_libraries(bool enabled);

  // ---- whole-step replay (CUDA graphs) ----------------------------------------------------
  // Records everything `step` launches, without running it, into a graph that replay() runs
  // again with the same addresses. Memory that `step` allocates comes from a pool private
  // to the graph, so nothing outside can reuse it between replays. Returns nullptr where
  // the backend cannot record (the CPU).
  virtual std::unique_ptr<StepGraph> capture(const std::function<void()>& step) {
    (void)step;
    return nullptr;
  }

  // ---- ops ---------------------------------------------------------------------------
  // y = value, for any dtype (for I32 the value is converted; for U8 saturated, saturate_u8).
  virtual void fill(Tensor& y, float value) = 0;
  // c = alpha * op(a) @ op(b) + beta * c, op(t) = t or t^T; a, b, c 2-D.
  virtual void matmul(const Tensor& a, bool transpose_a, const Tensor& b, bool transpose_b,
                      Tensor& c, float alpha, float beta) = 0;
  // y[n, f] = act(x[n, f] + bias[f]), act None, Relu, Tanh or Sigmoid: a Dense layer's
  // epilogue in one pass over the output.
  virtual void bias_activation_forward(Activation act, const Tensor& x, const Tensor& bias,
                                       Tensor& y) = 0;
  // Its backward for act != None, from the forward output y: dx = act'(y) * dy and
  // dbias[f] = sum_n dx[n, f], in one pass.
  virtual void bias_activation_backward(Activation act, const Tensor& y, const Tensor& dy,
                                        Tensor& dx, Tensor& dbias) = 0;
  // db[f] = sum_n dy[n, f]   (the bias gradient when act is None)
  virtual void sum_rows(const Tensor& dy, Tensor& db) = 0;
  // y = a (op) b, elementwise, same shapes.
  virtual void binary(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& y) = 0;
  // y = alpha * x + beta * y (scale when beta = 0, accumulate when beta = 1).
  virtual void axpby(float alpha, const Tensor& x, float beta, Tensor& y) = 0;
  // Relu, Tanh or Sigmoid, elementwise. Backward uses the forward *output* y, which is
  // enough for all three: relu' = [y > 0], tanh' = 1 - y^2, sigmoid' = y (1 - y).
  virtual void activation_forward(Activation act, const Tensor& x, Tensor& y) = 0;
  virtual void activation_backward(Activation act, const Tensor& y, const Tensor& dy,
                                   Tensor& dx) = 0;
  // Row-wise softmax (or log-softmax) of x: (N, C); backward uses the output y.
  virtual void softmax_forward(const Tensor& x, Tensor& y, bool log) = 0;
  virtual void softmax_backward(const Tensor& y, const Tensor& dy, Tensor& dx, bool log) = 0;
  // Fused softmax + sparse categorical cross-entropy: logits (N, C), labels I32 (N,).
  // Writes probs (N, C) for the backward and loss (N,) = -log softmax(logits)[label].
  virtual void softmax_cross_entropy_forward(const Tensor& logits, const Tensor& labels,
                                             Tensor& probs, Tensor& loss) = 0;
  // dlogits[n, c] = dloss[n] * (probs[n, c] - [c == label[n]])
  virtual void softmax_cross_entropy_backward(const Tensor& probs, const Tensor& labels,
                                              const Tensor& dloss, Tensor& dlogits) = 0;
  // Binary cross-entropy of probabilities p against targets t in [0, 1], elementwise,
  // with p clipped to [eps, 1 - eps] as Keras does (eps = 1e-7).
  virtual void binary_cross_entropy_forward(const Tensor& p, const Tensor& target,
                                            Tensor& loss) = 0;
  virtual void binary_cross_entropy_backward(const Tensor& p, const Tensor& target,
                                             const Tensor& dloss, Tensor& dp) = 0;
  // The same loss from the logits z of a sigmoid head, fused and numerically stable:
  //   loss = max(z, 0) - z t + log(1 + exp(-|z|))   (never exp of a large positive number)
  //   dz   = dloss (sigmoid(z) - t)
  // Unlike the clipped form above, the gradient never vanishes at a confidently wrong output.
  virtual void sigmoid_cross_entropy_forward(const Tensor& logits, const Tensor& target,
                                             Tensor& loss) = 0;
  virtual void sigmoid_cross_entropy_backward(const Tensor& logits, const Tensor& target,
                                              const Tensor& dloss, Tensor& dlogits) = 0;
  // Inverted dropout: element i is kept when uniform(philox(key = seed, counter = (i, s)))
  // >= rate, s = step[0], and then scaled by 1 / (1 - rate). `step` is an I32 scalar on the
  // device (the model's count of training steps): reading it there instead of taking a
  // number from the host is what lets a replayed CUDA graph draw a fresh mask every step.
  // The mask is recomputed in backward, never stored.
  virtual void dropout_forward(const Tensor& x, Tensor& y, float rate, uint64_t seed,
                               const Tensor& step) = 0;
  virtual void dropout_backward(const Tensor& dy, Tensor& dx, float rate, uint64_t seed,
                                const Tensor& step) = 0;
  // y[i] = mean + stddev * z_i, z_i standard normal: Box-Muller on the Philox stream `seed`,
  // element i from counter block i / 4 (the rule and its bounds: core/rng.h, box_muller4).
  // Both backends compute the same numbers up to the rounding of their logf, sinf and cosf,
  // whatever the thread count or grid. Independent streams need different seeds
  // (derive_seed): the words are those of philox_uniform(seed, i).
  virtual void random_normal(Tensor& y, float mean, float stddev, uint64_t seed) = 0;
  // y[0] = scale * sum(x); y has one element (stays on the device).
  virtual void sum(const Tensor& x, Tensor& y, float scale) = 0;
  // y[i] = scale * s[0] for all i: the backward of sum/mean, without a host round trip.
  virtual void broadcast_scalar(const Tensor& s, float scale, Tensor& y) = 0;
  // y[i, ...] = x[index[i], ...]; any dtype; index I32 (B,). Batches are gathered this way.
  virtual void gather_rows(const Tensor& x, const Tensor& index, Tensor& y) = 0;
  // Keras' ImageDataGenerator augmentation (seed 004: shear, zoom, horizontal flip, rescale),
  // one affine resampling per image:
  //   out[n, r, c, ch] = scale * images[n, clamp(round(m0*r + m1*c + m2)),
  //                                         clamp(round(m3*r + m4*c + m5)), ch]
  // images U8 (N, H, W, C); transforms F32 (N, 6): per image the 2x3 matrix (m0..m5) taking an
  // output pixel (row, col) to the source pixel it reads; nearest-neighbour sampling and,
  // outside the image, the nearest edge pixel (Keras fill_mode='nearest'); out F32 (N, H, W, C).
  // round(x) = floorf(x + 0.5f), the order of the float operations and the clamp are written
  // once in core/affine_sample.h, so both backends read the same pixels, bit for bit. Shapes
  // are checked by the backends themselves (detail::check_augment_images). The matrices are
  // drawn by datasets/augment.h.
  virtual void augment_images(const Tensor& images, const Tensor& transforms, Tensor& out,
                              float scale) = 0;
  // count[0] += number of rows n with argmax(logits[n, :]) == labels[n]  (count F32), labels
  // I32 (N,). With labels F32 (N,) and logits (N, 1) (a sigmoid head's logits): the rows with
  // (logits[n] > 0) == (labels[n] > 0.5), Keras' binary accuracy at threshold 0.5.
  virtual void count_correct(const Tensor& logits, const Tensor& labels, Tensor& count) = 0;
  // Optimizers update every parameter of a model in one call over its flat buffers.
  // SGD with momentum (Keras): v = momentum * v - lr * g; p += v  (v unused when momentum 0).
  virtual void sgd_update(Tensor& param, const Tensor& grad, Tensor& velocity, float lr,
                          float momentum) = 0;
  // Adam (Keras): m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2; p -= lr_t m / (sqrt(v) + eps),
  // lr_t = adam_step_size(config, t) with t = step[0] + 1 read on the device.
  virtual void adam_update(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v,
                           const AdamConfig& config, const Tensor& step) = 0;
  // counter[0] += 1 for an I32 scalar on the device (the step counter above).
  virtual void increment(Tensor& counter) = 0;

  // ---- convolutions and pooling: NHWC activations, Keras filters (core/conv_geometry.h) ------
  // Every output is overwritten.
  // y[n, oh, ow, co] = sum over (kh, kw, ci) of x[n, oh*stride_h + kh - pad_top,
  //   ow*stride_w + kw - pad_left, ci] * w[kh, kw, ci, co], zero outside x. The bias and the
  //   activation follow as bias_activation_forward on y viewed as (batch*out_h*out_w, out_c).
  virtual void conv2d_forward(const Conv2dGeometry& g, const Tensor& x, const Tensor& w,
                              Tensor& y) = 0;
  // dx = d loss / d x for dy = d loss / d y: the transposed convolution of dy with w.
  virtual void conv2d_backward_data(const Conv2dGeometry& g, const Tensor& dy, const Tensor& w,
                                    Tensor& dx) = 0;
  // dw = d loss / d w: patches^T @ dy, (K x M) @ (M x out_c) in GEMM terms.
  virtual void conv2d_backward_filter(const Conv2dGeometry& g, const Tensor& x, const Tensor& dy,
                                      Tensor& dw) = 0;
  // y[n, oh, ow, c] = max of x over the window (padded positions never win).
  virtual void max_pool2d_forward(const Conv2dGeometry& g, const Tensor& x, Tensor& y) = 0;
  // dx = 0 except at each window's maximum, which gets that window's dy (on ties the first
  // in row-major window order; overlapping windows add). Uses the forward output y.
  virtual void max_pool2d_backward(const Conv2dGeometry& g, const Tensor& x, const Tensor& y,
                                   const Tensor& dy, Tensor& dx) = 0;
  // RMSprop (Keras): s = rho s + (1 - rho) g^2; p -= lr g / (sqrt(s) + eps).
  virtual void rmsprop_update(Tensor& param, const Tensor& grad, Tensor& mean_square, float lr,
                              float rho, float epsilon) = 0;
  // Adadelta (Keras): s = rho s + (1 - rho) g^2; d = sqrt(u + eps) / sqrt(s + eps) * g;
  // u = rho u + (1 - rho) d^2; p -= lr d.
  virtual void adadelta_update(Tensor& param, const Tensor& grad, Tensor& mean_square,
                               Tensor& mean_square_delta, float lr, float rho, float epsilon) = 0;

  // ---- Jacobians (core/linearize.h, nn/jacobian.h) ------------------------------------------
  // The forward-mode rule of an elementwise op, for K directions at once: t and out hold K
  // stacked copies of y's shape, (K, *y.shape), and out[k, i] = d[i] * t[k, i] with
  //   d = act'(x) written through the forward output y (relu: [y > 0], tanh: 1 - y^2,
  //       sigmoid: y (1 - y)) for Relu, Tanh, Sigmoid;
  //   d = y itself for None: the rule of a product, y holding the other factor.
  // An elementwise op's Jacobian is diagonal, so the same call is its batched reverse-mode
  // rule. out may be t (in place).
  virtual void elementwise_jvp(Activation act, const Tensor& y, const Tensor& t, Tensor& out) = 0;
  // y[to(i, j, k)] = x[from(i, j, k)] for every (i, j, k) below `extent`: a transpose, a
  // permutation, a scatter into a diagonal or a broadcast of one element, in one pass. Both
  // walks stay inside their tensors (engine::strided_copy in core/ops.h checks) and `to`
  // visits no element twice (else which write lands is unspecified); elements of y that the
  // walk misses keep their values.
  virtual void strided_copy(const Tensor& x, Tensor& y, const std::array<int64_t, 3>& extent,
                            const Walk3d& from, const Walk3d& to) = 0;
};

// A recorded training step (Backend::capture); replay() runs it again on the device,
// asynchronously, with the same addresses.
class StepGraph {
 public:
  virtual ~StepGraph() = default;
  virtual void replay() = 0;
  virtual int64_t kernel_count() const = 0;  // kernel launches recorded in one step
};

// The backend that runs ops for `device`; throws engine::Error if that device cannot be used
// (no CUDA backend built, no GPU present), with a one-line reason.
Backend& backend_for(Device device);

// Whether backend_for(device) would succeed; `why_not` gets the reason when it would not.
bool device_available(Device device, std::string* why_not = nullptr);

}  // namespace engine
