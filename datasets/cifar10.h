// CIFAR-10, the binary version (cifar-10-binary.tar.gz, "suitable for C programs"), and a
// synthetic stand-in of the same shape for timing runs without the data.
//
// The archive unpacks to cifar-10-batches-bin/ holding data_batch_1.bin .. data_batch_5.bin
// (50,000 training images) and test_batch.bin (10,000). Every batch file is 10,000 records of
// 3,073 bytes, nothing else:
//
//   byte 0          the label, 0..9 (airplane, automobile, bird, cat, deer, dog, frog, horse,
//                   ship, truck)
//   bytes 1..3072   the 32x32 image channel-planar: 1,024 red bytes, then 1,024 green, then
//                   1,024 blue, each plane row-major (row 0 first, left to right)
//
// The engine's activations are NHWC, so the reader turns every record's three planes into
// one (32, 32, 3) image and scales it to [0, 1] (byte / 255), as the seed-003 Keras script
// does. scripts/fetch_data.sh checks the archive's MD5 and unpacks it where load_cifar10
// looks: <data_dir>/cifar10/cifar-10-batches-bin/.
#pragma once
#include <cstdint>
#include <string>

#include "datasets/mnist.h"

namespace engine::datasets {

constexpr int64_t kCifarSide = 32;
constexpr int64_t kCifarChannels = 3;
constexpr int64_t kCifarRecordBytes = 1 + kCifarSide * kCifarSide * kCifarChannels;  // 3,073
constexpr int64_t kCifarRecordsPerBatch = 10000;

struct CifarData {
  LabeledImages train, test;  // 32 x 32 x 3 images (channels last), labels 0..9
  // One line saying exactly which data was loaded; apps print it as is. Synthetic data says
  // so in capitals, and why it was used.
  std::string description;
};

// Reads one batch file. `records` is how many records it must hold (the official files hold
// 10,000; 0 accepts any nonzero count). Throws engine::Error with one line naming the file and
// the problem: missing, not a regular file (a directory, a FIFO, a device), empty, a size that is
// not a whole number of 3,073-byte records (truncated, or not the binary version), the wrong
// record count, a label above 9.
LabeledImages read_cifar10_batch(const std::string& path, int64_t records = kCifarRecordsPerBatch);

// Where load_cifar10 reads the batch files: <data_dir>/cifar10/cifar-10-batches-bin.
std::string cifar10_dir(const std::string& data_dir);

// Loads a dataset by name:
//   "cifar10"   the six batch files from cifar10_dir(data_dir); every file must be there
//   "synthetic" 50,000 train + 10,000 test random 32x32x3 images with random labels 0..9,
//               made from `seed`; for timing only, a model cannot learn anything from them
//   "auto"      "cifar10" where the folder cifar10_dir(data_dir) exists, else "synthetic",
//               with the reason in the description. A folder that is there but lacks a batch
//               file, or holds one that cannot be read, is an error naming the file: a partial
//               data set never turns into synthetic data in silence.
// Throws engine::Error naming the file for missing or broken files, and naming the folder with
// the system's reason where a folder cannot be searched (Permission denied).
CifarData load_cifar10(const std::string& name, const std::string& data_dir, uint64_t seed = 0);

}  // namespace engine::datasets
