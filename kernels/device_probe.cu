// Five probes. FMA rate: every thread runs 8 independent FMA chains (enough to cover the
// 4-cycle FMA latency on each of an SM's 4 schedulers) for 4,096 iterations; 4 blocks of 256
// threads per SM. On an H100 SXM (132 SMs, 128 FP32 lanes each, ~1.98 GHz boost) the
// datasheet figure is 132 x 128 x 2 x 1.98e9 = 67 TFLOP/s. Copy: cudaMemcpyAsync of 1 GiB
// device to device, counting bytes read plus bytes written (an H100 is specified at about 3 TB/s).
// Launch: 1,000 launches of an empty kernel back to back, timed on the device: the floor
// under any kernel, ~2-4 us on a current GPU. Host <-> device: 256 MiB each way from and into
// pinned memory (PCIe 5 x16: ~50 GB/s at best per direction).
#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/cuda_check.h"
#include "kernels/device_probe.h"

namespace engine::cuda {
namespace {

constexpr int CHAINS = 8;
constexpr int ITERATIONS = 4096;
constexpr int THREADS = 256;

__global__ void fma_probe_kernel(float* out, float seed) {
  float v[CHAINS];
#pragma unroll
  for (int c = 0; c < CHAINS; ++c) v[c] = seed + static_cast<float>(threadIdx.x + c);
  for (int i = 0; i < ITERATIONS; ++i) {
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) v[c] = fmaf(v[c], 0.999999f, 1e-7f);
  }
  float s = 0.0f;
#pragma unroll
  for (int c = 0; c < CHAINS; ++c) s += v[c];
  if (s == 12345.678f) out[0] = s;  // never true: keeps the chains from being optimised away
}

__global__ void empty_kernel() {}

// Median of `runs` timings of `work`, in seconds, measured with events on `stream`.
template <typename Work>
double median_seconds(cudaStream_t stream, int runs, Work&& work) {
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  work();  // warm-up
  std::vector<double> times;
  for (int r = 0; r < runs; ++r) {
    CHECK_CUDA(cudaEventRecord(start, stream));
    work();
    CHECK_CUDA(cudaEventRecord(stop, stream));
    CHECK_CUDA(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
    times.push_back(ms * 1e-3);
  }
  CHECK_CUDA(cudaEventDestroy(start));
  CHECK_CUDA(cudaEventDestroy(stop));
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

DevicePeaks measure_device_peaks(cudaStream_t stream) {
  int device = 0, sms = 0;
  CHECK_CUDA(cudaGetDevice(&device));
  CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  DevicePeaks peaks;

  float* sink = nullptr;
  CHECK_CUDA(cudaMalloc(&sink, sizeof(float)));
  const int blocks = 4 * sms;
  const double fma_seconds = median_seconds(stream, 5, [&] {
    fma_probe_kernel<<<blocks, THREADS, 0, stream>>>(sink, 1.0f);
    CHECK_LAUNCH();
  });
  peaks.fp32_flops = 2.0 * CHAINS * ITERATIONS * double{THREADS} * blocks / fma_seconds;
  CHECK_CUDA(cudaFree(sink));

  const size_t bytes = size_t{1} << 30;
  void *src = nullptr, *dst = nullptr;
  CHECK_CUDA(cudaMalloc(&src, bytes));
  CHECK_CUDA(cudaMalloc(&dst, bytes));
  CHECK_CUDA(cudaMemsetAsync(src, 1, bytes, stream));
  const double copy_seconds = median_seconds(stream, 5, [&] {
    CHECK_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream));
  });
  peaks.copy_bytes_per_s = 2.0 * static_cast<double>(bytes) / copy_seconds;
  CHECK_CUDA(cudaFree(src));
  CHECK_CUDA(cudaFree(dst));

  // PCIe (or NVLink-C2C) each way, from and into page-locked memory: what the prefetching
  // loader and pinned staging get. Pageable memory goes through a driver bounce buffer and
  // gets less (the seed-002 sweep's "with copies" curve).
  const size_t host_bytes = size_t{256} << 20;
  void *pinned = nullptr, *device_buffer = nullptr;
  CHECK_CUDA(cudaMallocHost(&pinned, host_bytes));
  CHECK_CUDA(cudaMalloc(&device_buffer, host_bytes));
  std::memset(pinned, 1, host_bytes);
  const double h2d_seconds = median_seconds(stream, 3, [&] {
    CHECK_CUDA(cudaMemcpyAsync(device_buffer, pinned, host_bytes, cudaMemcpyHostToDevice, stream));
  });
  const double d2h_seconds = median_seconds(stream, 3, [&] {
    CHECK_CUDA(cudaMemcpyAsync(pinned, device_buffer, host_bytes, cudaMemcpyDeviceToHost, stream));
  });
  peaks.host_to_device_bytes_per_s = static_cast<double>(host_bytes) / h2d_seconds;
  peaks.device_to_host_bytes_per_s = static_cast<double>(host_bytes) / d2h_seconds;
  CHECK_CUDA(cudaFreeHost(pinned));
  CHECK_CUDA(cudaFree(device_buffer));

  constexpr int LAUNCHES = 1000;
  peaks.launch_seconds = median_seconds(stream, 5, [&] {
    for (int i = 0; i < LAUNCHES; ++i) empty_kernel<<<1, 1, 0, stream>>>();
    CHECK_LAUNCH();
  }) / LAUNCHES;
  return peaks;
}

}  // namespace engine::cuda
