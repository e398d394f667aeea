// JPEG decoding on the GPU (jpeg_gpu.h): nvJPEG's batched decode, then our resize.
//
// Napkin math, the Dogs-vs-Cats tree (2,000 JPEGs of 100-500 px, ~60,000 decoded pixels an
// image on average, to 150 x 150): the CPU decodes one in 0.4-0.5 ms a core, ~28,000 images/s
// from a 16-core host's 15 loader workers, where the TF32 step eats ~44,000
// (docs/results/dogs_vs_cats.md). An H100 or H200 has hardware JPEG engines (NVJPG) beside its
// SMs; at 1-4 Gpixel/s for the engines together, 60,000 pixels an image is 15-60 us of engine
// time, i.e. tens of thousands of images/s, with little SM time taken from the step (nvJPEG's
// colour conversion and the resize: 67,500 output bytes an image, read from ~180 KB of
// decoded RGB: ~0.1 us of bandwidth). The host still reads each file and parses its header
// (nvJPEG does part of the Huffman work on the CPU for the CUDA backend). Measured by
// apps/jpeg_bench on an H100 host: 19,400 images/s in calls of 32 images, 41,400 in calls of
// 512, from one host thread; 16 cores of libjpeg-turbo, 35,000-37,000. Inside the loader
// (calls of ~120 to ~410 images beside a training step, H200): 17,000-20,000 while its calls
// ran, ~10,000 beside the FP32 step, whose kernels hold the SMs.
//
// The resize is the CPU path's (datasets/jpeg_image.cpp, resize_bilinear) computed per output
// byte: the same taps in 256ths, the vertical blend exact in 16 bits, the horizontal one
// rounded. Given the same decoded pixels it gives the same bytes; nvJPEG's inverse DCT and
// colour conversion are not libjpeg's, so the decoded pixels themselves differ by a unit or two.
#include "kernels/jpeg_gpu.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "kernels/cuda_check.h"

#if ENGINE_WITH_NVJPEG
#include <nvjpeg.h>
#endif

namespace engine::cuda {

#if ENGINE_WITH_NVJPEG
namespace {

constexpr int ONE = 256;  // bilinear weights in 256ths, as on the CPU

// Where output coordinate i samples a source axis of n pixels for m outputs (pixel centres
// aligned): its lower neighbour, its upper one and the upper one's weight in 256ths. The CPU's
// formula in double, so both sides agree to the bit.
struct Tap {
  int lo, hi, weight;
};
__device__ Tap tap_of(int i, int n, int m) {
  const double step = static_cast<double>(n) / m;
  const double s = fmin(fmax((i + 0.5) * step - 0.5, 0.0), n - 1.0);
  const int lo = static_cast<int>(s);
  return {lo, min(lo + 1, n - 1), static_cast<int>(llround((s - lo) * ONE))};
}

// One decoded image: interleaved RGB at `source`, `pitch` bytes a row, resized into `target`.
struct Decoded {
  const uint8_t* source;
  int pitch, height, width;
  uint8_t* target;  // device memory, or pinned host memory (written across the bus)
};

// Thread per output byte (y, x, channel) of image blockIdx.y.
__global__ void resize_decoded_kernel(const Decoded* __restrict__ images, int height, int width) {
  const Decoded d = images[blockIdx.y];
  const int per_image = height * width * 3;
  for (int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); i < per_image;
       i += static_cast<int>(gridDim.x * blockDim.x)) {
    const int c = i % 3, x = i / 3 % width, y = i / (3 * width);
    const Tap ty = tap_of(y, d.height, height), tx = tap_of(x, d.width, width);
    const uint8_t* top = d.source + static_cast<int64_t>(ty.lo) * d.pitch;
    const uint8_t* bottom = d.source + static_cast<int64_t>(ty.hi) * d.pitch;
    // The vertical blend of each neighbour column (exact: bytes times 256ths), then across.
    const uint32_t left = top[3 * tx.lo + c] * (ONE - ty.weight) + bottom[3 * tx.lo + c] * ty.weight;
    const uint32_t right = top[3 * tx.hi + c] * (ONE - ty.weight) + bottom[3 * tx.hi + c] * ty.weight;
    d.target[i] = static_cast<uint8_t>(
        (left * static_cast<uint32_t>(ONE - tx.weight) + right * static_cast<uint32_t>(tx.weight) +
         ONE * ONE / 2) >> 16);
  }
}

void check_nvjpeg(nvjpegStatus_t status, const char* what) {
  ENGINE_CHECK(status == NVJPEG_STATUS_SUCCESS, "nvJPEG: ", what, " failed (status ",
               static_cast<int>(status), ")");
}

// Device memory that grows to the largest request and is kept (no allocation in steady state).
class Scratch {
 public:
  ~Scratch() {
    if (data_) cudaFree(data_);
  }
  void* get(size_t bytes) {
    if (bytes > size_) {
      if (data_) CHECK_CUDA(cudaFree(data_));
      data_ = nullptr;
      CHECK_CUDA(cudaMalloc(&data_, bytes));
      size_ = bytes;
    }
    return data_;
  }

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace

struct GpuJpegDecoder::State {
  int batch, height, width;
  int device = 0;  // the GPU the decoder was made on: a caller's thread may start on another
  cudaStream_t stream = nullptr;
  // Waited on by sleeping, not spinning: the loader's other workers need the core meanwhile.
  cudaEvent_t done = nullptr;
  nvjpegHandle_t handle = nullptr;
  nvjpegJpegState_t jpeg = nullptr;
  std::string backend;
  int initialized_count = 0;  // the batch size nvjpegDecodeBatchedInitialize was last given
  Scratch decoded, descriptors;
};

bool nvjpeg_built() { return true; }

GpuJpegDecoder::GpuJpegDecoder(int batch, int height, int width) : state_(std::make_unique<State>()) {
  ENGINE_CHECK(batch > 0 && height > 0 && width > 0, "GpuJpegDecoder: batch ", batch, " of ", height, "x",
               width, " images");
  State& s = *state_;
  s.batch = batch;
  s.height = height;
  s.width = width;
  CHECK_CUDA(cudaGetDevice(&s.device));
  CHECK_CUDA(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking));
  CHECK_CUDA(cudaEventCreateWithFlags(&s.done, cudaEventBlockingSync | cudaEventDisableTiming));
  // The hardware engines where the GPU has them, else nvJPEG's CUDA kernels.
  if (nvjpegCreateEx(NVJPEG_BACKEND_HARDWARE, nullptr, nullptr, 0, &s.handle) == NVJPEG_STATUS_SUCCESS) {
    s.backend = "hardware JPEG engines";
  } else {
    check_nvjpeg(nvjpegCreateEx(NVJPEG_BACKEND_DEFAULT, nullptr, nullptr, 0, &s.handle), "nvjpegCreateEx");
    s.backend = "CUDA kernels";
  }
  check_nvjpeg(nvjpegJpegStateCreate(s.handle, &s.jpeg), "nvjpegJpegStateCreate");
}

GpuJpegDecoder::~GpuJpegDecoder() {
  if (state_->jpeg) nvjpegJpegStateDestroy(state_->jpeg);
  if (state_->handle) nvjpegDestroy(state_->handle);
  if (state_->done) cudaEventDestroy(state_->done);
  if (state_->stream) cudaStreamDestroy(state_->stream);
}

const std::string& GpuJpegDecoder::backend() const { return state_->backend; }

std::vector<bool> GpuJpegDecoder::decode(const std::vector<const std::vector<uint8_t>*>& files,
                                         const std::vector<uint8_t*>& targets) {
  State& s = *state_;
  ENGINE_CHECK(static_cast<int>(files.size()) <= s.batch, "GpuJpegDecoder: ", files.size(),
               " files for a batch of ", s.batch);
  ENGINE_CHECK(targets.size() == files.size(), "GpuJpegDecoder: ", files.size(), " files, ", targets.size(),
               " targets");
  CHECK_CUDA(cudaSetDevice(s.device));
  cudaStream_t stream = s.stream;
  // Which files nvJPEG takes: colour JPEGs whose header it can read (gray and CMYK go to the
  // CPU, which converts them as the loader always has).
  std::vector<bool> taken(files.size(), false);
  std::vector<Decoded> decoded;
  std::vector<const unsigned char*> data;
  std::vector<size_t> lengths;
  size_t bytes = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    int components = 0;
    nvjpegChromaSubsampling_t subsampling = NVJPEG_CSS_UNKNOWN;
    int widths[NVJPEG_MAX_COMPONENT] = {}, heights[NVJPEG_MAX_COMPONENT] = {};
    const std::vector<uint8_t>& file = *files[i];
    if (file.empty() || nvjpegGetImageInfo(s.handle, file.data(), file.size(), &components, &subsampling, widths,
                                           heights) != NVJPEG_STATUS_SUCCESS)
      continue;
    // At most 64 M pixels, as the CPU decoder (datasets/jpeg_image.h, kMaxDecodedPixels).
    if (components != 3 || subsampling == NVJPEG_CSS_UNKNOWN || widths[0] <= 0 || heights[0] <= 0 ||
        int64_t{widths[0]} * heights[0] > 64'000'000)
      continue;
    taken[i] = true;
    decoded.push_back({nullptr, 3 * widths[0], heights[0], widths[0], targets[i]});
    data.push_back(file.data());
    lengths.push_back(file.size());
    bytes += static_cast<size_t>(3) * widths[0] * heights[0];
  }
  if (decoded.empty()) return taken;

  // Every image's RGB one after another in one scratch buffer.
  auto* base = static_cast<uint8_t*>(s.decoded.get(bytes));
  std::vector<nvjpegImage_t> destinations(decoded.size());
  size_t offset = 0;
  for (size_t j = 0; j < decoded.size(); ++j) {
    decoded[j].source = base + offset;
    destinations[j] = nvjpegImage_t{};
    destinations[j].channel[0] = base + offset;
    destinations[j].pitch[0] = static_cast<size_t>(decoded[j].pitch);
    offset += static_cast<size_t>(decoded[j].pitch) * decoded[j].height;
  }
  const int count = static_cast<int>(decoded.size());
  if (count != s.initialized_count) {
    check_nvjpeg(nvjpegDecodeBatchedInitialize(s.handle, s.jpeg, count, 1, NVJPEG_OUTPUT_RGBI),
                 "nvjpegDecodeBatchedInitialize");
    s.initialized_count = count;
  }
  // A file nvJPEG's header check passed but its decoder refuses fails the whole batch: then
  // every file goes back to the caller.
  if (nvjpegDecodeBatched(s.handle, s.jpeg, data.data(), lengths.data(), destinations.data(), stream) !=
      NVJPEG_STATUS_SUCCESS)
    return std::vector<bool>(files.size(), false);

  auto* descriptors = static_cast<Decoded*>(s.descriptors.get(sizeof(Decoded) * decoded.size()));
  CHECK_CUDA(cudaMemcpyAsync(descriptors, decoded.data(), sizeof(Decoded) * decoded.size(),
                             cudaMemcpyHostToDevice, stream));
  // Enough blocks to cover an image's bytes a few times over, one row of blocks per image.
  const int threads = 256;
  const int per_image = s.height * s.width * 3;
  const dim3 grid(static_cast<unsigned>(std::min((per_image + threads - 1) / threads, 64)),
                  static_cast<unsigned>(count));
  resize_decoded_kernel<<<grid, threads, 0, stream>>>(descriptors, s.height, s.width);
  CHECK_LAUNCH_NAMED("resize_decoded_kernel");
  // The host vectors nvJPEG and the copy read from die here, and the caller reads the targets
  // next: wait until they are done.
  CHECK_CUDA(cudaEventRecord(s.done, stream));
  CHECK_CUDA(cudaEventSynchronize(s.done));
  return taken;
}

#else  // !ENGINE_WITH_NVJPEG

struct GpuJpegDecoder::State {
  std::string backend;
};

bool nvjpeg_built() { return false; }

GpuJpegDecoder::GpuJpegDecoder(int, int, int) {
  throw Error("this build has no nvJPEG (the CUDA toolkit's libnvjpeg was not found at configure time)");
}
GpuJpegDecoder::~GpuJpegDecoder() = default;
const std::string& GpuJpegDecoder::backend() const { return state_->backend; }
std::vector<bool> GpuJpegDecoder::decode(const std::vector<const std::vector<uint8_t>*>&,
                                         const std::vector<uint8_t*>&) {
  return {};
}

#endif

}  // namespace engine::cuda
