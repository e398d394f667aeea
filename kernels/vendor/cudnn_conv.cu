// cuDNN convolutions and max pooling in the engine's layout (kernels/vendor/cudnn_conv.h), with
// cuDNN's legacy API: tensor, filter, convolution and pooling descriptors, created once per
// geometry and kept with the chosen algorithm and its workspace size.
//
// Layout: cuDNN takes NHWC activations as they are (CUDNN_TENSOR_NHWC), but its NHWC filters are
// (out_c, kernel_h, kernel_w, in_c) ("KRSC"), not Keras' (kernel_h, kernel_w, in_c, out_c): read
// as matrices, one is the other's transpose, (K x out_c) vs (out_c x K), K = kh * kw * in_c. So
// each call transposes w into a scratch tensor (backward-filter transposes dw back), with our
// strided_copy kernel. Padding: a legacy descriptor pads top and bottom alike, while Keras'
// `same` puts the odd row of padding at the bottom (stride 2, even sizes, even kernels). Then x
// gets that row (and/or column) appended explicitly, zeros for a convolution and -inf for max
// pooling (padding never wins), and dx is cut back out of the padded gradient.
//
// Napkin math, seed 003's CIFAR-10 CNN at batch 100 (FP32, H100):
//   convolution FLOPs per step, forward: 2 * M * N * K summed over the six layers
//     32x32: 2*102400*32*27 + 2*102400*32*288 = 2.1 GFLOP; 16x16: 0.9 + 1.9; 8x8: 0.9 + 1.9
//     = 7.7 GFLOP, x3 with backward-data and backward-filter: 23 GFLOP per step, 500 steps per
//     epoch: 11.6 TFLOP, 0.23 s at cuBLAS' 51 TFLOP/s: the floor for any FP32 epoch.
//   what this wrapper adds: the six filters hold 287k floats (1.1 MB); three transposes per
//     layer per step move ~7 MB, ~2 us at 3 TB/s, plus 18 small launches (~1 us each inside a
//     CUDA graph). Negligible next to the ~0.45 ms of arithmetic per step above.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <mutex>

#include "core/error.h"
#include "core/ops/conv2d.h"
#include "core/ops/elementwise.h"
#include "core/ops/pool.h"
#include "core/ops/strided_copy.h"
#include "kernels/cuda_device.h"
#include "kernels/launch.h"
#include "kernels/vendor/cudnn_check.h"
#include "kernels/vendor/cudnn_conv.h"

namespace engine::cuda::vendor {

[[noreturn]] void throw_cudnn_error(cudnnStatus_t status, const char* call, const char* file,
                                    int line) {
  char message[512] = {0};  // cuDNN's own account of the failure, often naming the parameter
  cudnnGetLastErrorString(message, sizeof message);
  throw DeviceError(detail::concat("cuDNN error: ", call, " failed at ", file, ":", line, ": ",
                                   cudnnGetErrorString(status), message[0] ? " (" : "", message,
                                   message[0] ? ")" : ""));
}

namespace {

// Candidates needing more workspace than this are passed over: the seed layers' best need a
// few MB at most, and the caching allocator keeps a workspace once it has been allocated.
constexpr size_t MAX_WORKSPACE_BYTES = size_t{512} << 20;
const float ONE = 1.0f, ZERO = 0.0f;

std::string version_name(size_t version) {  // cuDNN 9 encodes major * 10000 + minor * 100 + patch
  return detail::concat(version / 10000, ".", (version / 100) % 100, ".", version % 100);
}

// One handle for the process, on the device's stream (created before any op can be recorded:
// CudaDevice::set_vendor_libraries asks for it through cudnn_available()).
cudnnHandle_t handle() {
  static const cudnnHandle_t h = [] {
    cudnnHandle_t created = nullptr;
    CHECK_CUDNN(cudnnCreate(&created));
    CHECK_CUDNN(cudnnSetStream(created, stream()));
    return created;
  }();
  return h;
}

// The descriptors and choices below are built once per geometry and live as long as the
// process (like the device itself). One mutex guards them and the handle.
std::mutex& vendor_mutex() {
  static std::mutex mutex;
  return mutex;
}

cudnnTensorDescriptor_t nhwc_descriptor(int64_t n, int64_t h, int64_t w, int64_t c) {
  ENGINE_CHECK(n * h * w * c < (int64_t{1} << 31),
               "cuDNN: tensors of 2^31 elements or more are not supported (", n, "x", h, "x", w,
               "x", c, ")");
  cudnnTensorDescriptor_t d = nullptr;
  CHECK_CUDNN(cudnnCreateTensorDescriptor(&d));
  CHECK_CUDNN(cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT,
                                         static_cast<int>(n), static_cast<int>(c),
                                         static_cast<int>(h), static_cast<int>(w)));
  return d;
}

// Rows cuDNN's symmetric padding lacks at the bottom (or columns at the right) to reproduce
// Keras' padding: Keras pads pad_top on top and the rest of what the last window needs below.
int64_t extra_padding(int64_t in, int64_t kernel, int64_t stride, int64_t pad_top, int64_t out) {
  const int64_t pad_bottom = (out - 1) * stride + kernel - in - pad_top;
  return pad_bottom > pad_top ? pad_bottom - pad_top : 0;
}

// A geometry as a map key (with the precision for convolutions).
using Key = std::array<int64_t, 14>;
Key key_of(const Conv2dGeometry& g, bool tf32) {
  return {g.batch,    g.in_h,     g.in_w,    g.in_c,     g.kernel_h, g.kernel_w, g.out_c,
          g.stride_h, g.stride_w, g.pad_top, g.pad_left, g.out_h,    g.out_w,    tf32 ? 1 : 0};
}

// x walked as (batch, rows, row of in_w * in_c floats), into an image `extra_w` columns wider
// and `extra_h` rows taller: the copy between x and its padded form, either way.
constexpr size_t PLAIN = 0, PADDED = 1;
struct PaddedWalks {
  std::array<int64_t, 3> extent;
  Walk3d walk[2];
};
PaddedWalks padded_walks(const Conv2dGeometry& g, int64_t extra_h, int64_t extra_w) {
  const int64_t row = g.in_w * g.in_c, padded_row = (g.in_w + extra_w) * g.in_c;
  return {{g.batch, g.in_h, row},
          {Walk3d{0, {g.in_h * row, row, 1}},
           Walk3d{0, {(g.in_h + extra_h) * padded_row, padded_row, 1}}}};
}

// x itself, or x with `extra_h` rows and `extra_w` columns of `value` appended to every image.
Tensor padded(const Conv2dGeometry& g, const Tensor& x, int64_t extra_h, int64_t extra_w,
              float value) {
  if (extra_h == 0 && extra_w == 0) return x;
  Tensor xp = Tensor::empty({g.batch, g.in_h + extra_h, g.in_w + extra_w, g.in_c}, DType::F32,
                            x.device());
  const PaddedWalks p = padded_walks(g, extra_h, extra_w);
  cuda::fill(xp, value);
  cuda::strided_copy(x, xp, p.extent, p.walk[PLAIN], p.walk[PADDED]);
  return xp;
}

// A buffer for the gradient of x: dx itself, or a padded scratch that crop() copies into dx.
Tensor padded_gradient(const Conv2dGeometry& g, Tensor& dx, int64_t extra_h, int64_t extra_w) {
  if (extra_h == 0 && extra_w == 0) return dx;
  return Tensor::empty({g.batch, g.in_h + extra_h, g.in_w + extra_w, g.in_c}, DType::F32,
                       dx.device());
}
void crop(const Conv2dGeometry& g, const Tensor& dxp, Tensor& dx, int64_t extra_h,
          int64_t extra_w) {
  if (extra_h == 0 && extra_w == 0) return;
  const PaddedWalks p = padded_walks(g, extra_h, extra_w);
  cuda::strided_copy(dxp, dx, p.extent, p.walk[PADDED], p.walk[PLAIN]);
}

// cuDNN's KRSC filters back to Keras' layout (the inverse of krsc_filters in the header).
void keras_filters(const Conv2dGeometry& g, const Tensor& wk, Tensor& w) {
  const int64_t K = g.gemm_k(), N = g.out_c;
  cuda::strided_copy(wk, w, {K, N, 1}, Walk3d{0, {1, K, 0}}, Walk3d{0, {N, 1, 0}});
}

// A workspace from the caching allocator: a captured step records its address, and replays
// find the same block (no cudaMalloc in the steady state).
Tensor workspace(size_t bytes, Device device) {
  if (bytes == 0) return Tensor();
  return Tensor::empty({static_cast<int64_t>((bytes + 3) / 4)}, DType::F32, device);
}
void* data_or_null(const Tensor& t) { return t.defined() ? t.raw_data() : nullptr; }

// ---- algorithm choice ------------------------------------------------------------------------

template <typename Algo>
struct Choice {
  bool chosen = false;
  Algo algo{};
  cudnnMathType_t math = CUDNN_FMA_MATH;
  size_t workspace_bytes = 0;
};

bool stream_is_capturing() {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  CHECK_CUDA(cudaStreamIsCapturing(stream(), &status));
  return status != cudaStreamCaptureStatusNone;
}

// The math cuDNN may use. FP32: FMA only, since cuDNN's default math lets FP32 convolutions
// run on TF32 tensor cores from Ampere on. --tf32: the default math, which allows TF32, as
// PyTorch does for cuDNN convolutions unless told otherwise.
cudnnMathType_t requested_math(bool tf32) { return tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH; }

// The best algorithm for one convolution op of one geometry. `search(measure, capacity, &count,
// perf, workspace, workspace_bytes)` ranks the candidates, either by cuDNN's heuristics
// (cudnnGet*_v7: runs nothing) or by running each one (cudnnFind*Ex). Measuring must not happen
// while the stream is recorded into a graph (it runs and synchronizes), so a captured first call
// takes the heuristics' ranking. The measurement runs on the call's own operands and output
// (every op here overwrites its output, beta = 0) with a workspace from the caching allocator as
// large as the hungriest candidate within the limit: the plain cudnnFind* would instead allocate
// inputs of its own that nothing initializes (compute-sanitizer's initcheck reports every read
// of them) and memory outside the allocator. The first candidate that works within the limit
// under the math we allow wins; `workspace_size(algo, &bytes)` asks what it needs under that math.
template <typename Perf, typename Search, typename WorkspaceSize>
auto choose(const char* op, cudnnConvolutionDescriptor_t conv, bool tf32, const Tensor& output,
            Search search, WorkspaceSize workspace_size) {
  using Algo = decltype(Perf::algo);
  std::array<Perf, 16> perf{};
  int count = 0;
  const int capacity = static_cast<int>(perf.size());
  CHECK_CUDNN(cudnnSetConvolutionMathType(conv, requested_math(tf32)));
  search(false, capacity, &count, perf.data(), nullptr, 0);
  if (!stream_is_capturing()) {
    // A quarter of the free memory at most, so that a small GPU still runs the candidates
    // that fit instead of failing to allocate the largest one's workspace.
    const size_t free_bytes = output.services().memory_info().free_bytes;
    const size_t limit = std::min(MAX_WORKSPACE_BYTES, free_bytes / 4);
    size_t bytes = 0;
    for (int i = 0; i < count; ++i) {
      if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= limit) {
        bytes = std::max(bytes, perf[i].memory);
      }
    }
    const Tensor ws = workspace(bytes, output.device());
    // Two rounds: cuDNN times each candidate once, and under lazy module loading (CUDA's
    // default) a candidate's first launch also pays for loading its kernels, which can outweigh
    // the run itself. The first round loads them all; the second ranks.
    for (int round = 0; round < 2; ++round) {
      search(true, capacity, &count, perf.data(), data_or_null(ws), bytes);
    }
  }
  for (int i = 0; i < count; ++i) {
    if (perf[i].status != CUDNN_STATUS_SUCCESS || perf[i].memory > MAX_WORKSPACE_BYTES) continue;
    Choice<Algo> choice;
    choice.algo = perf[i].algo;
    // cuDNN may report a candidate found under FMA math as "default" math: keep FP32 strict.
    choice.math = tf32 ? perf[i].mathType : CUDNN_FMA_MATH;
    CHECK_CUDNN(cudnnSetConvolutionMathType(conv, choice.math));
    if (workspace_size(choice.algo, &choice.workspace_bytes) != CUDNN_STATUS_SUCCESS ||
        choice.workspace_bytes > MAX_WORKSPACE_BYTES) {
      continue;
    }
    choice.chosen = true;
    return choice;
  }
  throw DeviceError(detail::concat("cuDNN has no usable ", op, " algorithm for this geometry (",
                                   count, " candidates, ", tf32 ? "TF32" : "FP32", ")"));
}

// ---- convolution ----------------------------------------------------------------------------

struct ConvPlan {
  int64_t extra_h = 0, extra_w = 0;  // rows/columns of zeros appended to x (Keras' odd padding)
  cudnnTensorDescriptor_t x = nullptr;  // (batch, in_h + extra_h, in_w + extra_w, in_c)
  cudnnTensorDescriptor_t y = nullptr;  // (batch, out_h, out_w, out_c)
  cudnnFilterDescriptor_t w = nullptr;  // KRSC: (out_c, kernel_h, kernel_w, in_c)
  cudnnConvolutionDescriptor_t conv = nullptr;
  Choice<cudnnConvolutionFwdAlgo_t> forward;
  Choice<cudnnConvolutionBwdDataAlgo_t> backward_data;
  Choice<cudnnConvolutionBwdFilterAlgo_t> backward_filter;
};

ConvPlan& conv_plan(const Conv2dGeometry& g, bool tf32) {
  static std::map<Key, std::unique_ptr<ConvPlan>> plans;
  std::unique_ptr<ConvPlan>& slot = plans[key_of(g, tf32)];
  if (slot) return *slot;
  auto plan = std::make_unique<ConvPlan>();
  plan->extra_h = extra_padding(g.in_h, g.kernel_h, g.stride_h, g.pad_top, g.out_h);
  plan->extra_w = extra_padding(g.in_w, g.kernel_w, g.stride_w, g.pad_left, g.out_w);
  plan->x = nhwc_descriptor(g.batch, g.in_h + plan->extra_h, g.in_w + plan->extra_w, g.in_c);
  plan->y = nhwc_descriptor(g.batch, g.out_h, g.out_w, g.out_c);
  CHECK_CUDNN(cudnnCreateFilterDescriptor(&plan->w));
  CHECK_CUDNN(cudnnSetFilter4dDescriptor(
      plan->w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC, static_cast<int>(g.out_c),
      static_cast<int>(g.in_c), static_cast<int>(g.kernel_h), static_cast<int>(g.kernel_w)));
  CHECK_CUDNN(cudnnCreateConvolutionDescriptor(&plan->conv));
  // Cross-correlation (no kernel flip), as Keras' Conv2D; FP32 accumulation.
  CHECK_CUDNN(cudnnSetConvolution2dDescriptor(
      plan->conv, static_cast<int>(g.pad_top), static_cast<int>(g.pad_left),
      static_cast<int>(g.stride_h), static_cast<int>(g.stride_w), 1, 1, CUDNN_CROSS_CORRELATION,
      CUDNN_DATA_FLOAT));
  int n = 0, c = 0, h = 0, w = 0;
  CHECK_CUDNN(cudnnGetConvolution2dForwardOutputDim(plan->conv, plan->x, plan->w, &n, &c, &h, &w));
  ENGINE_CHECK(n == g.batch && c == g.out_c && h == g.out_h && w == g.out_w,
               "cuDNN computes a ", n, "x", h, "x", w, "x", c, " output for a convolution whose "
               "output is ", g.batch, "x", g.out_h, "x", g.out_w, "x", g.out_c);
  slot = std::move(plan);
  return *slot;
}

// Each op's choice, measured (see choose) on the operands and output of its first call.
void choose_forward(ConvPlan& p, bool tf32, const Tensor& x, const Tensor& w, Tensor& y) {
  if (p.forward.chosen) return;
  p.forward = choose<cudnnConvolutionFwdAlgoPerf_t>(
      "forward convolution", p.conv, tf32, y,
      [&](bool measure, int capacity, int* count, cudnnConvolutionFwdAlgoPerf_t* perf,
          void* ws, size_t ws_bytes) {
        if (measure) {
          CHECK_CUDNN(cudnnFindConvolutionForwardAlgorithmEx(
              handle(), p.x, x.raw_data(), p.w, w.raw_data(), p.conv, p.y, y.raw_data(), capacity,
              count, perf, ws, ws_bytes));
        } else {
          CHECK_CUDNN(cudnnGetConvolutionForwardAlgorithm_v7(handle(), p.x, p.w, p.conv, p.y,
                                                             capacity, count, perf));
        }
      },
      [&](cudnnConvolutionFwdAlgo_t algo, size_t* bytes) {
        return cudnnGetConvolutionForwardWorkspaceSize(handle(), p.x, p.w, p.conv, p.y, algo,
                                                       bytes);
      });
}

void choose_backward_data(ConvPlan& p, bool tf32, const Tensor& w, const Tensor& dy, Tensor& dx) {
  if (p.backward_data.chosen) return;
  p.backward_data = choose<cudnnConvolutionBwdDataAlgoPerf_t>(
      "backward-data convolution", p.conv, tf32, dx,
      [&](bool measure, int capacity, int* count, cudnnConvolutionBwdDataAlgoPerf_t* perf,
          void* ws, size_t ws_bytes) {
        if (measure) {
          CHECK_CUDNN(cudnnFindConvolutionBackwardDataAlgorithmEx(
              handle(), p.w, w.raw_data(), p.y, dy.raw_data(), p.conv, p.x, dx.raw_data(),
              capacity, count, perf, ws, ws_bytes));
        } else {
          CHECK_CUDNN(cudnnGetConvolutionBackwardDataAlgorithm_v7(handle(), p.w, p.y, p.conv,
                                                                  p.x, capacity, count, perf));
        }
      },
      [&](cudnnConvolutionBwdDataAlgo_t algo, size_t* bytes) {
        return cudnnGetConvolutionBackwardDataWorkspaceSize(handle(), p.w, p.y, p.conv, p.x, algo,
                                                            bytes);
      });
}

void choose_backward_filter(ConvPlan& p, bool tf32, const Tensor& x, const Tensor& dy,
                            Tensor& dw) {
  if (p.backward_filter.chosen) return;
  p.backward_filter = choose<cudnnConvolutionBwdFilterAlgoPerf_t>(
      "backward-filter convolution", p.conv, tf32, dw,
      [&](bool measure, int capacity, int* count, cudnnConvolutionBwdFilterAlgoPerf_t* perf,
          void* ws, size_t ws_bytes) {
        if (measure) {
          CHECK_CUDNN(cudnnFindConvolutionBackwardFilterAlgorithmEx(
              handle(), p.x, x.raw_data(), p.y, dy.raw_data(), p.conv, p.w, dw.raw_data(),
              capacity, count, perf, ws, ws_bytes));
        } else {
          CHECK_CUDNN(cudnnGetConvolutionBackwardFilterAlgorithm_v7(handle(), p.x, p.y, p.conv,
                                                                    p.w, capacity, count, perf));
        }
      },
      [&](cudnnConvolutionBwdFilterAlgo_t algo, size_t* bytes) {
        return cudnnGetConvolutionBackwardFilterWorkspaceSize(handle(), p.x, p.y, p.conv, p.w,
                                                              algo, bytes);
      });
}

// ---- pooling --------------------------------------------------------------------------------

struct PoolPlan {
  int64_t extra_h = 0, extra_w = 0;  // rows/columns of -inf appended to x (Keras' odd padding)
  cudnnTensorDescriptor_t x = nullptr;  // (batch, in_h + extra_h, in_w + extra_w, c)
  cudnnTensorDescriptor_t y = nullptr;  // (batch, out_h, out_w, c)
  cudnnPoolingDescriptor_t pool = nullptr;
};

PoolPlan& pool_plan(const Conv2dGeometry& g) {
  static std::map<Key, std::unique_ptr<PoolPlan>> plans;
  std::unique_ptr<PoolPlan>& slot = plans[key_of(g, false)];
  if (slot) return *slot;
  auto plan = std::make_unique<PoolPlan>();
  plan->extra_h = extra_padding(g.in_h, g.kernel_h, g.stride_h, g.pad_top, g.out_h);
  plan->extra_w = extra_padding(g.in_w, g.kernel_w, g.stride_w, g.pad_left, g.out_w);
  plan->x = nhwc_descriptor(g.batch, g.in_h + plan->extra_h, g.in_w + plan->extra_w, g.in_c);
  plan->y = nhwc_descriptor(g.batch, g.out_h, g.out_w, g.out_c);
  CHECK_CUDNN(cudnnCreatePoolingDescriptor(&plan->pool));
  // Max pooling ignores cuDNN's own padding; a NaN in a window gives NaN, never a silent number.
  CHECK_CUDNN(cudnnSetPooling2dDescriptor(
      plan->pool, CUDNN_POOLING_MAX, CUDNN_PROPAGATE_NAN, static_cast<int>(g.kernel_h),
      static_cast<int>(g.kernel_w), static_cast<int>(g.pad_top), static_cast<int>(g.pad_left),
      static_cast<int>(g.stride_h), static_cast<int>(g.stride_w)));
  int n = 0, c = 0, h = 0, w = 0;
  CHECK_CUDNN(cudnnGetPooling2dForwardOutputDim(plan->pool, plan->x, &n, &c, &h, &w));
  ENGINE_CHECK(n == g.batch && c == g.out_c && h == g.out_h && w == g.out_w,
               "cuDNN computes a ", n, "x", h, "x", w, "x", c, " output for a pooling whose "
               "output is ", g.batch, "x", g.out_h, "x", g.out_w, "x", g.out_c);
  slot = std::move(plan);
  return *slot;
}

constexpr float MINUS_INFINITY = -std::numeric_limits<float>::infinity();

}  // namespace

bool cudnn_available(std::string* why_not) {
  const size_t loaded = cudnnGetVersion();
  std::string why;
  if (loaded / 10000 != CUDNN_MAJOR) {
    why = detail::concat("the cuDNN library that loaded is ", version_name(loaded),
                         ", but this build was compiled against cuDNN ",
                         version_name(CUDNN_VERSION));
  } else {
    try {
      std::lock_guard<std::mutex> lock(vendor_mutex());
      handle();
    } catch (const DeviceError& e) {
      why = e.what();
    }
  }
  if (why.empty()) return true;
  if (why_not) *why_not = why;
  return false;
}

std::string cudnn_version() {
  const size_t loaded = cudnnGetVersion();
  std::string name = "cuDNN " + version_name(loaded);
  if (loaded != CUDNN_VERSION) name += " (built with " + version_name(CUDNN_VERSION) + ")";
  return name;
}

void cudnn_conv2d_forward_krsc(const Conv2dGeometry& g, const Tensor& x, const Tensor& w_krsc,
                               Tensor& y, bool tf32) {
  if (y.numel() == 0) return;
  if (x.numel() == 0 || w_krsc.numel() == 0) {  // no input channels: every sum is empty
    cuda::fill(y, 0.0f);
    return;
  }
  std::lock_guard<std::mutex> lock(vendor_mutex());
  ConvPlan& p = conv_plan(g, tf32);
  const Tensor xp = padded(g, x, p.extra_h, p.extra_w, 0.0f);
  choose_forward(p, tf32, xp, w_krsc, y);
  const Tensor ws = workspace(p.forward.workspace_bytes, y.device());
  CHECK_CUDNN(cudnnSetConvolutionMathType(p.conv, p.forward.math));
  CHECK_CUDNN(cudnnConvolutionForward(handle(), &ONE, p.x, xp.raw_data(), p.w, w_krsc.raw_data(),
                                      p.conv, p.forward.algo, data_or_null(ws),
                                      p.forward.workspace_bytes, &ZERO, p.y, y.raw_data()));
}

void cudnn_conv2d_backward_data_krsc(const Conv2dGeometry& g, const Tensor& dy,
                                     const Tensor& w_krsc, Tensor& dx, bool tf32) {
  if (dx.numel() == 0) return;
  if (dy.numel() == 0 || w_krsc.numel() == 0) {
    cuda::fill(dx, 0.0f);
    return;
  }
  std::lock_guard<std::mutex> lock(vendor_mutex());
  ConvPlan& p = conv_plan(g, tf32);
  Tensor dxp = padded_gradient(g, dx, p.extra_h, p.extra_w);
  choose_backward_data(p, tf32, w_krsc, dy, dxp);
  const Tensor ws = workspace(p.backward_data.workspace_bytes, dx.device());
  CHECK_CUDNN(cudnnSetConvolutionMathType(p.conv, p.backward_data.math));
  CHECK_CUDNN(cudnnConvolutionBackwardData(handle(), &ONE, p.w, w_krsc.raw_data(), p.y,
                                           dy.raw_data(), p.conv, p.backward_data.algo,
                                           data_or_null(ws), p.backward_data.workspace_bytes,
                                           &ZERO, p.x, dxp.raw_data()));
  crop(g, dxp, dx, p.extra_h, p.extra_w);
}

void cudnn_conv2d_backward_filter_krsc(const Conv2dGeometry& g, const Tensor& x, const Tensor& dy,
                                       Tensor& dw_krsc, bool tf32) {
  if (dw_krsc.numel() == 0) return;
  if (x.numel() == 0 || dy.numel() == 0) {  // an empty batch: no terms
    cuda::fill(dw_krsc, 0.0f);
    return;
  }
  std::lock_guard<std::mutex> lock(vendor_mutex());
  ConvPlan& p = conv_plan(g, tf32);
  const Tensor xp = padded(g, x, p.extra_h, p.extra_w, 0.0f);
  choose_backward_filter(p, tf32, xp, dy, dw_krsc);
  const Tensor ws = workspace(p.backward_filter.workspace_bytes, dw_krsc.device());
  CHECK_CUDNN(cudnnSetConvolutionMathType(p.conv, p.backward_filter.math));
  CHECK_CUDNN(cudnnConvolutionBackwardFilter(handle(), &ONE, p.x, xp.raw_data(), p.y,
                                             dy.raw_data(), p.conv, p.backward_filter.algo,
                                             data_or_null(ws), p.backward_filter.workspace_bytes,
                                             &ZERO, p.w, dw_krsc.raw_data()));
}

void cudnn_conv2d_forward(const Conv2dGeometry& g, const Tensor& x, const Tensor& w, Tensor& y,
                          bool tf32) {
  cudnn_conv2d_forward_krsc(g, x, krsc_filters(g, w), y, tf32);
}

void cudnn_conv2d_backward_data(const Conv2dGeometry& g, const Tensor& dy, const Tensor& w,
                                Tensor& dx, bool tf32) {
  cudnn_conv2d_backward_data_krsc(g, dy, krsc_filters(g, w), dx, tf32);
}

void cudnn_conv2d_backward_filter(const Conv2dGeometry& g, const Tensor& x, const Tensor& dy,
                                  Tensor& dw, bool tf32) {
  Tensor dw_krsc = Tensor::empty(krsc_shape(g), DType::F32, dw.device());
  cudnn_conv2d_backward_filter_krsc(g, x, dy, dw_krsc, tf32);
  keras_filters(g, dw_krsc, dw);
}

void cudnn_max_pool2d_forward(const Conv2dGeometry& g, const Tensor& x, Tensor& y) {
  if (y.numel() == 0) return;
  std::lock_guard<std::mutex> lock(vendor_mutex());
  PoolPlan& p = pool_plan(g);
  const Tensor xp = padded(g, x, p.extra_h, p.extra_w, MINUS_INFINITY);
  CHECK_CUDNN(cudnnPoolingForward(handle(), p.pool, &ONE, p.x, xp.raw_data(), &ZERO, p.y,
                                  y.raw_data()));
}

void cudnn_max_pool2d_backward(const Conv2dGeometry& g, const Tensor& x, const Tensor& y,
                               const Tensor& dy, Tensor& dx) {
  if (dx.numel() == 0) return;
  if (dy.numel() == 0) {
    cuda::fill(dx, 0.0f);
    return;
  }
  std::lock_guard<std::mutex> lock(vendor_mutex());
  PoolPlan& p = pool_plan(g);
  const Tensor xp = padded(g, x, p.extra_h, p.extra_w, MINUS_INFINITY);
  Tensor dxp = padded_gradient(g, dx, p.extra_h, p.extra_w);
  CHECK_CUDNN(cudnnPoolingBackward(handle(), p.pool, &ONE, p.y, y.raw_data(), p.y, dy.raw_data(),
                                   p.x, xp.raw_data(), &ZERO, p.x, dxp.raw_data()));
  crop(g, dxp, dx, p.extra_h, p.extra_w);
}

}  // namespace engine::cuda::vendor

// The ops' cuDNN variants (core/ops/conv2d.h, core/ops/pool.h), which the dispatch point calls
// under --device cudnn: the functions above, with TF32 where the device has it switched on.
namespace engine::vendor {

void conv2d_forward(const Conv2dGeometry& g, const Tensor& x, const Tensor& w, Tensor& y) {
  cuda::vendor::cudnn_conv2d_forward(g, x, w, y, cuda::device_of(y).tf32());
}

void conv2d_backward_data(const Conv2dGeometry& g, const Tensor& dy, const Tensor& w, Tensor& dx) {
  cuda::vendor::cudnn_conv2d_backward_data(g, dy, w, dx, cuda::device_of(dx).tf32());
}

void conv2d_backward_filter(const Conv2dGeometry& g, const Tensor& x, const Tensor& dy, Tensor& dw) {
  cuda::vendor::cudnn_conv2d_backward_filter(g, x, dy, dw, cuda::device_of(dw).tf32());
}

void max_pool2d_forward(const Conv2dGeometry& g, const Tensor& x, Tensor& y) {
  cuda::vendor::cudnn_max_pool2d_forward(g, x, y);
}

void max_pool2d_backward(const Conv2dGeometry& g, const Tensor& x, const Tensor& y,
                         const Tensor& dy, Tensor& dx) {
  cuda::vendor::cudnn_max_pool2d_backward(g, x, y, dy, dx);
}

}  // namespace engine::vendor
