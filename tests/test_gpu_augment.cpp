// augment_images on the GPU (kernels/augment.cu) against the CPU reference (cpu/augment.cpp):
// bit for bit, since both take each source pixel from core/affine_sample.h with every float
// operation rounded on its own, and the value is one multiply (scale * byte) on both. A
// single differing pixel means the coordinate arithmetic drifted (an FMA, another rounding
// rule), so the comparison is exact, with the output poisoned (NaN) first so that a value the
// kernel never writes fails too. Also the uint8 dtype on the device: copies, fill, and the
// byte path of gather_rows (kernels/gather.cu).
//
// Without a GPU, gpu_skip_main.cpp exits 77 before any test runs (ctest: "Skipped").
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "core/device_services.h"
#include "core/error.h"
#include "core/ops.h"
#include "core/rng.h"
#include "core/tensor.h"
#include "datasets/augment.h"

using engine::Device;
using engine::DType;
using engine::Generator;
using engine::Shape;
using engine::Tensor;
using engine::datasets::AugmentConfig;
namespace raw = engine::raw;

namespace {

const float NaN = std::numeric_limits<float>::quiet_NaN();
constexpr float RESCALE = 1.0f / 255.0f;

// False, loudly, when no GPU can be used: every test case starts `if (!gpu_or_skip()) return;`.
bool gpu_or_skip() {
  std::string why;
  if (engine::device_available(Device::cuda(), &why)) return true;
  MESSAGE("SKIPPED: no GPU (", why, ") — GPU augmentation not tested");
  std::fprintf(stderr, "*** GPU TEST SKIPPED: no GPU: %s ***\n", why.c_str());
  return false;
}

std::vector<uint8_t> random_bytes(size_t n, uint64_t seed) {
  Generator rng(seed);
  std::vector<uint8_t> out(n);
  for (auto& b : out) b = static_cast<uint8_t>(rng.below(256));
  return out;
}

// Runs raw::augment_images on CPU and on GPU tensors with the same inputs (cpu::, then
// cuda::augment_images) and checks every value equal.
void check_cpu_equals_gpu(const Shape& shape, const AugmentConfig& config, uint64_t seed) {
  const int64_t count = shape[0];
  const auto height = static_cast<int>(shape[1]), width = static_cast<int>(shape[2]);
  const std::vector<uint8_t> bytes = random_bytes(static_cast<size_t>(engine::numel(shape)), seed);
  std::vector<int64_t> samples;
  for (int64_t i = 0; i < count; ++i) samples.push_back(i);
  const std::vector<float> m =
      engine::datasets::transforms_for_batch(config, height, width, seed, 0, samples);

  Tensor images = Tensor::from_bytes(bytes, shape);
  Tensor transforms = Tensor::from_vector(m, {count, 6});
  Tensor cpu_out = Tensor::full(shape, NaN);
  raw::augment_images(images, transforms, cpu_out, RESCALE);

  Tensor gpu_images = images.to(Device::cuda());
  Tensor gpu_transforms = transforms.to(Device::cuda());
  Tensor gpu_out = Tensor::full(shape, NaN, Device::cuda());
  raw::augment_images(gpu_images, gpu_transforms, gpu_out, RESCALE);

  const std::vector<float> want = cpu_out.to_vector();
  const std::vector<float> got = gpu_out.to_vector();
  REQUIRE(got.size() == want.size());
  size_t differ = 0, first = want.size();
  for (size_t i = 0; i < want.size(); ++i) {
    // Bitwise: == is false for the NaN poison, so an unwritten value counts as a difference.
    if (!(got[i] == want[i])) {
      if (differ++ == 0) first = i;
    }
  }
  INFO("shape ", engine::to_string(shape), ": ", differ, " of ", want.size(),
       " values differ; first at ", first);
  CHECK(differ == 0);
}

}  // namespace

TEST_CASE("augment_images: GPU equals CPU bit for bit on a seed-004 batch (32 x 150x150x3)") {
  if (!gpu_or_skip()) return;
  check_cpu_equals_gpu({32, 150, 150, 3}, AugmentConfig{}, 4);
}

TEST_CASE("augment_images: GPU equals CPU for odd sizes and wild transforms") {
  if (!gpu_or_skip()) return;
  AugmentConfig wild;  // most pixels fall outside: the edge clamping on every side
  wild.shear_range = 1.5f;
  wild.zoom_range = 0.95f;
  for (const AugmentConfig& config : {AugmentConfig{}, wild}) {
    check_cpu_equals_gpu({1, 1, 1, 3}, config, 1);
    check_cpu_equals_gpu({3, 7, 13, 1}, config, 2);
    check_cpu_equals_gpu({2, 13, 7, 4}, config, 3);
    check_cpu_equals_gpu({5, 150, 150, 3}, config, 5);
  }
}

TEST_CASE("augment_images: GPU edge cases and checks") {
  if (!gpu_or_skip()) return;
  // Empty batch: no launch, no error.
  Tensor none = Tensor::empty({0, 4, 4, 3}, DType::U8, Device::cuda());
  Tensor none_out = Tensor::empty({0, 4, 4, 3}, DType::F32, Device::cuda());
  raw::augment_images(none, Tensor::empty({0, 6}, DType::F32, Device::cuda()), none_out, 1.0f);
  // Bad inputs throw on the host, before any launch.
  Tensor images = Tensor::zeros({2, 4, 5, 3}, DType::U8, Device::cuda());
  Tensor transforms = Tensor::zeros({2, 6}, DType::F32, Device::cuda());
  Tensor out = Tensor::zeros({2, 4, 5, 3}, DType::F32, Device::cuda());
  Tensor cpu_transforms = Tensor::zeros({2, 6});
  CHECK_THROWS_AS(raw::augment_images(images, cpu_transforms, out, 1.0f), engine::Error);
  Tensor five = Tensor::zeros({2, 5}, DType::F32, Device::cuda());
  CHECK_THROWS_AS(raw::augment_images(images, five, out, 1.0f), engine::Error);
  Tensor float_images = Tensor::zeros({2, 4, 5, 3}, DType::F32, Device::cuda());
  CHECK_THROWS_AS(raw::augment_images(float_images, transforms, out, 1.0f), engine::Error);
  // A NaN or huge matrix reads inside the image on both devices.
  const std::vector<float> odd = {NaN, 1e30f, -1e30f, 0.0f, -1e30f, NaN,
                                  1e30f, 1e30f, 1e30f, -1e30f, -1e30f, -1e30f};
  Tensor cpu_images = Tensor::from_bytes(random_bytes(2 * 4 * 5 * 3, 8), {2, 4, 5, 3});
  Tensor cpu_out = Tensor::full({2, 4, 5, 3}, NaN);
  raw::augment_images(cpu_images, Tensor::from_vector(odd, {2, 6}), cpu_out, 1.0f);
  raw::augment_images(cpu_images.to(Device::cuda()),
                      Tensor::from_vector(odd, {2, 6}, Device::cuda()), out, 1.0f);
  CHECK(out.to_vector() == cpu_out.to_vector());
}

TEST_CASE("uint8 tensors on the GPU: copies, fill, gather_rows") {
  if (!gpu_or_skip()) return;
  const std::vector<uint8_t> bytes = random_bytes(5 * 7, 9);  // rows of 7 bytes: not words
  Tensor gpu = Tensor::from_bytes(bytes, {5, 7}, Device::cuda());
  CHECK(gpu.to_bytes() == bytes);
  CHECK(gpu.clone().to(Device::cpu()).to_bytes() == bytes);
  const Tensor index = Tensor::from_ints({4, 0, 2, 2}, {4});
  const std::vector<uint8_t> want = engine::gather_rows(gpu.to(Device::cpu()), index).to_bytes();
  CHECK(engine::gather_rows(gpu, index.to(Device::cuda())).to_bytes() == want);
  Tensor z = Tensor::zeros({13}, DType::U8, Device::cuda());
  CHECK(z.to_bytes() == std::vector<uint8_t>(13, 0));
  raw::fill(z, 300.0f);
  CHECK(z.to_bytes() == std::vector<uint8_t>(13, 255));
}
