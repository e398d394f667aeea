// Batches of a JPEG folder for training, prepared ahead of the step that needs them, so that
// the device never waits for the host (seed 004: at 150 x 150 the model is small, and
// decoding and augmenting the photos is the real cost of an epoch).
//
//   producer thread                       training thread (next())
//   ---------------                       -------------------------
//   take a free slot (pinned memory)      wait for a ready slot      <- data wait, once the
//                                           device has run out of queued steps
//   for each image, on `workers` threads: enqueue its copy to the device, behind the step
//     decode the JPEG (or take it from      that is still running, and return at once
//     the cache), then either augment     the slot goes back to the producer once the
//     it into floats here (CPU), or       device has finished copying it (a fence)
//     keep the bytes and its transform
//     for the device (augment on GPU)
//   hand the slot over (ready queue)
//
// A slot is page-locked ("pinned") host memory: the GPU's copy engine reads it directly while
// the host goes on, where pageable memory would be copied twice and block the host. The queue
// holds `prefetch` slots, so the producer runs at most that many batches ahead.
//
// The workers fill a group of batches at a time (group_batches()), not one: 15 workers on a
// batch of 32 take two images each, and the batch is done only when the slowest image is (a
// 500-pixel photo decodes several times slower than a 100-pixel one), so at the end of every
// batch most workers sat idle. A group gives each worker 8 images or more to balance over.
// Measured on the 2-core development VM with batches of 4 (two images a worker a batch, as 16
// workers get at 32), the loader alone over the 2,000 synthetic JPEGs, three runs each:
// 3,600-3,800 images/s one batch at a time, 4,240-4,455 in groups (docs/results/dogs_vs_cats.md).
//
// What a slot carries to the device, for batch 32 of 150 x 150 x 3:
//   augment on the CPU: floats, 8.6 MB per batch (~0.35 ms over PCIe at ~25 GB/s);
//   augment on the GPU: bytes + 6 floats per image, 2.2 MB (~0.09 ms), and the device's
//   augment_images op writes the floats (~4 us at 3 TB/s): less to copy, less host work.
//
// Every image's random transform depends only on (seed, epoch, its sample index), never on
// the worker that drew it, so the batches are the same with 1 or 16 workers, and on the CPU or
// the GPU.
//
// Decoding on the GPU (decode_on_device, where the build has nvJPEG): one worker drives
// nvJPEG (the GPU's hardware JPEG engines where it has them) over a share of each group's
// files while the others decode the rest with libjpeg-turbo; so the two decoders add up. The
// GPU writes its images straight into the slot's pinned bytes, as a worker would, and the
// rest of the path is unchanged. Which decoder takes an image depends only on its sample index
// and the share (the same image, the same decoder, every epoch and with any number of
// workers); files nvJPEG hands back (gray, CMYK) go to the workers. The two decoders' pixels
// differ by about half a unit of 255 on average (chroma upsampling), so a run decoding on the
// GPU trains on slightly different pixels than one on the CPU.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/data_parallel.h"
#include "core/device_jpeg.h"
#include "core/device.h"
#include "core/tensor.h"
#include "datasets/augment.h"
#include "datasets/image_folder.h"

namespace engine::datasets {

struct ImageBatchOptions {
  int height = 150, width = 150;
  int64_t batch_size = 32;
  int workers = 0;   // threads decoding and augmenting; 0: all cores but one (over `world`)
  int prefetch = 8;  // batches prepared ahead (slots of pinned memory): absorbs the jitter
  bool shuffle = true;
  bool augment = false;  // one random transform per image per epoch
  AugmentConfig augment_config;
  bool augment_on_device = false;  // the device's augment_images op instead of the workers
  // Decoding every epoch (no cache): on the workers (libjpeg-turbo) only, or, on a GPU, with
  // nvJPEG taking about `device_decode_share` of the files too (see "Decoding on the GPU").
  bool decode_on_device = false;
  double device_decode_share = 0.4;
  uint64_t seed = 0;
  // Data-parallel training (core/data_parallel.h): this rank makes only its shard of every
  // epoch's order (rank_order), each image with the transform it would get in one process.
  int rank = 0, world = 1;
};

// The share of the images nvJPEG should take (decode_on_device) for it and the workers to take
// equally long, from their rates as a run measured them (images a second: nvJPEG's while its
// calls ran, one worker's): at share s nvJPEG spends s / device_rate an image and the workers
// (1 - s) / (workers x worker_rate), equal at device_rate / (device_rate + workers x
// worker_rate). Rates and workers must not be negative, nor all zero.
double balanced_device_share(double device_rate, double worker_rate, int workers);

// Every image of `folder` in batches of images (B, H, W, 3) in [0, 1] and labels (B,) as
// floats (the class index: 0 or 1 for two classes), on `device`.
class ImageBatches {
 public:
  // `cache`: the folder's decoded pixels (decode_folder's result, count*H*W*3 bytes, in the
  // order of folder.paths); empty: every epoch decodes the files again.
  ImageBatches(ImageFolder folder, std::vector<uint8_t> cache, Device device,
               const ImageBatchOptions& options);
  ~ImageBatches();
  ImageBatches(const ImageBatches&) = delete;
  ImageBatches& operator=(const ImageBatches&) = delete;

  int64_t size() const { return static_cast<int64_t>(folder_.paths.size()); }
  // The images this rank makes per epoch: size(), or its shard with several ranks.
  int64_t samples_per_epoch() const { return rows_per_rank(size(), options_.world); }
  int64_t batch_size() const { return options_.batch_size; }
  int workers() const { return options_.workers; }  // resolved: never 0
  // The device tensors every batch is written into: x (B, H, W, 3) F32, y (B,) F32.
  const Tensor& x() const { return x_; }
  const Tensor& y() const { return y_; }
  // What the loader trains on, for a checkpoint (nn::BatchSource::fingerprint): the CRC-32 of
  // its file list (each image's path below the folder, with its size in bytes), then that of
  // its labels. The same photos in another folder give the same value, other photos another.
  // Reads each file's size (one stat per image; throws engine::Error naming a file that has gone).
  uint64_t fingerprint() const;

  // Starts epoch `epoch` of `steps` batches (shuffled from (seed, epoch) when shuffling; with
  // several ranks, this rank's part of that order), from
  // batch `first_step` on (a run resumed from a checkpoint mid-epoch; the batches before it
  // are never made). The producer goes on into the following epochs on its own (while the
  // device validates, say), so when this epoch follows the last one with the same steps, its
  // first batches are ready; otherwise the producer restarts here and unfinished work is
  // dropped.
  void start_epoch(int64_t epoch, int64_t steps, int64_t first_step = 0);
  // Waits for the epoch's next batch and enqueues its transfer into x() and y() on the device
  // (asynchronously on a GPU); returns how many images it holds (B, or fewer for the last
  // batch of a pass). Rethrows what the producer failed with (a file that stopped decoding).
  int64_t next();
  // Seconds since start_epoch that the device sat idle in next() waiting for the producer
  // (the host's wait while the device still ran queued steps is not counted).
  double wait_seconds() const { return wait_seconds_; }
  // The host work per epoch so far, summed over workers: decoding, and augmenting.
  double decode_seconds() const;
  double augment_seconds() const;
  // The images that work was done for (batches made ahead and never used included).
  int64_t images_prepared() const;
  // Of those, the ones nvJPEG decoded (decode_on_device), and the seconds its calls took
  // (the worker driving it waits for each; all workers read the files beforehand).
  int64_t device_decoded_images() const;
  double device_decode_seconds() const;
  // "hardware JPEG engines" or "CUDA kernels" where decoding on the device; else empty.
  std::string device_decoder_backend() const;

 private:
  struct Slot {
    uint8_t* pixels = nullptr;  // pinned: B*H*W*3 bytes (augment on the device)
    float* values = nullptr;    // pinned: B*H*W*3 floats (augment on the host)
    float* transforms = nullptr;  // pinned: B*6 floats (augment on the device)
    float* labels = nullptr;      // pinned: B floats
    int64_t count = 0;
    int64_t epoch = 0;  // the epoch the batch belongs to
    uint64_t fence = 0;  // reached once the device has copied the slot
  };
  void produce(int64_t first_epoch, int64_t steps, int64_t first_step);
  std::vector<int32_t> epoch_order(int64_t epoch) const;
  // Batches first_batch, first_batch + 1, ... of the epoch (one a slot), their images
  // order[first_batch * batch_size] on, shared among the workers as one loop.
  void fill(const std::vector<Slot*>& slots, int64_t epoch, const int32_t* order, int64_t first_batch);
  // How many batches the workers fill together: enough for 8 images a worker, at most half
  // the slots (the device takes batches from the other half meanwhile); where nvJPEG decodes
  // too, half the slots: fewer group ends, where the workers and nvJPEG wait for each other.
  int64_t group_batches() const;
  void stop_producer();
  void release_copied_slots(size_t keep);
  // Whether nvJPEG is to take this sample's file (decode_on_device): by a hash of the index.
  bool device_decodes(int32_t sample) const;

  ImageFolder folder_;
  std::vector<uint8_t> cache_;
  Device device_;
  ImageBatchOptions options_;
  int64_t image_bytes_;
  Tensor x_, y_, device_pixels_, device_transforms_;
  std::vector<Slot> slots_;
  std::unique_ptr<DeviceJpegDecoder> device_decoder_;  // nvJPEG's, where decode_on_device

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Slot*> free_, ready_;
  std::deque<Slot*> in_flight_;  // handed to the device, not yet known to be copied
  bool stopping_ = false;
  std::exception_ptr failure_;
  std::thread producer_;
  // The consumer's side (the training thread only): the epoch, its steps, batches taken.
  int64_t epoch_ = 0, steps_ = 0, taken_ = 0;
  double wait_seconds_ = 0.0;
  double decode_seconds_ = 0.0, augment_seconds_ = 0.0;  // guarded by mutex_
  int64_t images_prepared_ = 0;                           // guarded by mutex_
  int64_t device_decoded_ = 0;                            // guarded by mutex_
  double device_decode_seconds_ = 0.0;                    // guarded by mutex_
};

}  // namespace engine::datasets
