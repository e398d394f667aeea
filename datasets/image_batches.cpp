// The prefetching image loader: see image_batches.h for the picture.
#include "datasets/image_batches.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <system_error>

#include "core/affine_sample.h"
#include "core/binary_file.h"
#include "core/device_jpeg.h"
#include "core/device_services.h"
#include "core/dispatch.h"
#include "core/error.h"
#include "core/ops/augment.h"
#include "core/rng.h"
#include "datasets/jpeg_image.h"

namespace engine::datasets {
namespace {

constexpr int kChannels = 3;
constexpr uint64_t kShuffleStream = 0x5348554646ull;  // "SHUFF"
constexpr uint64_t kDecoderStream = 0x4e564a5047ull;  // "NVJPG"

double seconds_between(std::chrono::steady_clock::time_point from,
                       std::chrono::steady_clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

}  // namespace

ImageBatches::ImageBatches(ImageFolder folder, std::vector<uint8_t> cache, Device device,
                           const ImageBatchOptions& options)
    : folder_(std::move(folder)),
      cache_(std::move(cache)),
      device_(device),
      options_(options),
      image_bytes_(int64_t{options.height} * options.width * kChannels) {
  ENGINE_CHECK(size() >= 1, folder_.root, ": no images to train on");
  ENGINE_CHECK(folder_.labels.size() == folder_.paths.size(), folder_.root,
               ": labels and paths out of step");
  ENGINE_CHECK(options_.batch_size >= 1, "batch size must be at least 1, got ",
               options_.batch_size);
  ENGINE_CHECK(options_.height >= 1 && options_.width >= 1, "image size must be positive, got ",
               options_.height, "x", options_.width);
  ENGINE_CHECK(options_.prefetch >= 2, "prefetch must be at least 2 batches, got ",
               options_.prefetch);
  ENGINE_CHECK(options_.workers >= 0, "workers must not be negative, got ", options_.workers);
  ENGINE_CHECK(options_.world >= 1 && options_.rank >= 0 && options_.rank < options_.world,
               "rank ", options_.rank, " of a world of ", options_.world);
  ENGINE_CHECK(cache_.empty() || static_cast<int64_t>(cache_.size()) == size() * image_bytes_,
               "the decoded cache holds ", cache_.size(), " bytes, not ", size(), " images of ",
               image_bytes_);
  if (options_.decode_on_device) {
    ENGINE_CHECK(!device_.is_cpu(), "decoding on the GPU needs a GPU device, not ", to_string(device_));
    ENGINE_CHECK(cache_.empty(), "decoding on the GPU: the images are cached, nothing is decoded");
    ENGINE_CHECK(options_.device_decode_share >= 0.0 && options_.device_decode_share <= 1.0,
                 "the GPU's share of the decoding must be in [0, 1], got ", options_.device_decode_share);
  }
  // All cores but one: the training thread needs one too, and a parallel region whose
  // threads outnumber the cores waits for the one the scheduler left out. Data-parallel ranks
  // share the host's cores (one host's ranks, as --gpus starts them).
  if (options_.workers == 0) {
    options_.workers = std::max(1, (omp_get_num_procs() - 1) / options_.world);
  }

  const int64_t batch = std::min(options_.batch_size, samples_per_epoch());
  options_.batch_size = batch;
  x_ = Tensor::empty({batch, options_.height, options_.width, kChannels}, DType::F32, device_);
  y_ = Tensor::zeros({batch}, DType::F32, device_);
  if (options_.augment_on_device) {
    device_pixels_ =
        Tensor::empty({batch, options_.height, options_.width, kChannels}, DType::U8, device_);
    device_transforms_ = Tensor::empty({batch, 6}, DType::F32, device_);
  }

  DeviceServices& services = device_services(device_);
  const auto pixels = static_cast<size_t>(batch * image_bytes_);
  slots_.resize(static_cast<size_t>(options_.prefetch));
  for (Slot& slot : slots_) {
    // Bytes where the device augments them or decodes into them (it writes pinned memory).
    if (options_.augment_on_device || options_.decode_on_device) {
      slot.pixels = static_cast<uint8_t*>(services.allocate_pinned(pixels));
    }
    if (options_.augment_on_device) {  // the bytes' transforms; the device augments
      slot.transforms =
          static_cast<float*>(services.allocate_pinned(static_cast<size_t>(batch) * 6 * sizeof(float)));
    } else {  // floats, augmented here
      slot.values = static_cast<float*>(services.allocate_pinned(pixels * sizeof(float)));
    }
    slot.labels = static_cast<float*>(services.allocate_pinned(static_cast<size_t>(batch) * sizeof(float)));
    free_.push_back(&slot);
  }
  if (options_.decode_on_device) {  // at most a group's images a call
    device_decoder_ = std::make_unique<DeviceJpegDecoder>(device_, static_cast<int>(group_batches() * batch),
                                                          options_.height, options_.width);
  }
}

ImageBatches::~ImageBatches() {
  stop_producer();
  DeviceServices& services = device_services(device_);
  try {
    services.synchronize();  // no copy may still read a slot we free
  } catch (const Error&) {
    // A device fault (the error that unwinds through here) fails every later call too; a
    // destructor must not throw, and the frees below are best effort.
  }
  for (Slot& slot : slots_) {
    if (slot.pixels) services.free_pinned(slot.pixels);
    if (slot.values) services.free_pinned(slot.values);
    if (slot.transforms) services.free_pinned(slot.transforms);
    if (slot.labels) services.free_pinned(slot.labels);
  }
}

void ImageBatches::stop_producer() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (producer_.joinable()) producer_.join();
  std::lock_guard<std::mutex> lock(mutex_);
  stopping_ = false;
  failure_ = nullptr;
  while (!ready_.empty()) {  // batches of an epoch cut short: never used
    free_.push_back(ready_.front());
    ready_.pop_front();
  }
}

uint64_t ImageBatches::fingerprint() const {
  namespace fs = std::filesystem;
  std::string listing;  // per image: its path below the root, a NUL, its size (8 bytes)
  for (const std::string& path : folder_.paths) {
    std::error_code error;
    const uint64_t bytes = fs::file_size(path, error);
    ENGINE_CHECK(!error, path, ": cannot read its size (", error.message(), ")");
    listing += fs::path(path).lexically_relative(folder_.root).generic_string();
    listing += '\0';
    listing.append(reinterpret_cast<const char*>(&bytes), sizeof bytes);
  }
  const auto* labels = reinterpret_cast<const char*>(folder_.labels.data());
  return uint64_t{crc32_of(listing.data(), listing.size())} << 32 |
         crc32_of(labels, folder_.labels.size() * sizeof(int32_t));
}

void ImageBatches::start_epoch(int64_t epoch, int64_t steps, int64_t first_step) {
  const int64_t batches = (samples_per_epoch() + options_.batch_size - 1) / options_.batch_size;
  ENGINE_CHECK(steps >= 1 && steps <= batches, "an epoch of ", samples_per_epoch(), " images in batches of ",
               options_.batch_size, " has 1 to ", batches, " steps, not ", steps);
  ENGINE_CHECK(first_step >= 0 && first_step < steps, "an epoch of ", steps,
               " steps cannot start at step ", first_step);
  const bool continues = producer_.joinable() && epoch == epoch_ + 1 && steps == steps_ &&
                         taken_ == steps_ && first_step == 0;
  if (!continues) {
    stop_producer();
    producer_ = std::thread(&ImageBatches::produce, this, epoch, steps, first_step);
  }
  epoch_ = epoch;
  steps_ = steps;
  taken_ = first_step;
  wait_seconds_ = 0.0;
}

std::vector<int32_t> ImageBatches::epoch_order(int64_t epoch) const {
  std::vector<int32_t> order(static_cast<size_t>(size()));
  std::iota(order.begin(), order.end(), 0);
  if (options_.shuffle) {  // Fisher-Yates
    // A stream of its own: transform_for draws from derive_seed(seed, epoch).
    Generator rng(derive_seed(derive_seed(options_.seed, kShuffleStream), static_cast<uint64_t>(epoch)));
    for (int64_t i = size() - 1; i > 0; --i) {
      std::swap(order[static_cast<size_t>(i)], order[rng.below(static_cast<uint64_t>(i + 1))]);
    }
  }
  if (options_.world == 1) return order;
  return rank_order(order, options_.batch_size, options_.rank, options_.world);
}

int64_t ImageBatches::group_batches() const {
  constexpr int64_t kImagesPerWorker = 8;
  // Where nvJPEG decodes, groups as large as the slots allow (half of them): each group ends
  // where the workers and nvJPEG's call wait for each other, and larger groups have fewer
  // such ends (H200, 2026-11-28, 64 ahead: 0.057-0.058 -> 0.050-0.053 s an epoch; nvJPEG's own rate
  // stayed ~19,000 images/s, though jpeg_bench has it at 34,400 in calls of 32 and 47,000 in
  // calls of 512 on an idle GPU).
  if (options_.decode_on_device) return std::max<int64_t>(1, options_.prefetch / 2);
  const int64_t wanted = (kImagesPerWorker * options_.workers + options_.batch_size - 1) / options_.batch_size;
  return std::max<int64_t>(1, std::min<int64_t>(wanted, options_.prefetch / 2));
}

// Epoch after epoch until stopped: the queue's free slots are what holds it back.
void ImageBatches::produce(int64_t first_epoch, int64_t steps, int64_t first_step) {
  const int64_t group = group_batches();
  std::vector<Slot*> slots;
  for (int64_t epoch = first_epoch;; ++epoch) {
    const std::vector<int32_t> order = epoch_order(epoch);
    for (int64_t b = epoch == first_epoch ? first_step : 0; b < steps; b += group) {
      slots.clear();
      for (int64_t j = 0; j < std::min(group, steps - b); ++j) {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] { return stopping_ || !free_.empty(); });
        if (stopping_) {  // the slots taken so far go back: stop_producer counts them all
          for (Slot* slot : slots) free_.push_back(slot);
          return;
        }
        slots.push_back(free_.front());
        free_.pop_front();
      }
      try {
        fill(slots, epoch, order.data(), b);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex_);
        for (Slot* slot : slots) free_.push_back(slot);
        failure_ = std::current_exception();
        changed_.notify_all();
        return;
      }
      {
        std::lock_guard<std::mutex> lock(mutex_);
        for (Slot* slot : slots) {
          slot->epoch = epoch;
          ready_.push_back(slot);
        }
      }
      changed_.notify_all();
    }
  }
}

double balanced_device_share(double device_rate, double worker_rate, int workers) {
  const double all_workers = worker_rate * workers;
  ENGINE_CHECK(device_rate >= 0.0 && all_workers >= 0.0 && device_rate + all_workers > 0.0,
               "balanced_device_share: rates ", device_rate, " and ", worker_rate, " x ", workers, " workers");
  return device_rate / (device_rate + all_workers);
}

bool ImageBatches::device_decodes(int32_t sample) const {
  // The top 53 bits of a mixed index as a fraction in [0, 1): about `share` of the samples.
  const uint64_t mixed = derive_seed(kDecoderStream, static_cast<uint64_t>(sample));
  return static_cast<double>(mixed >> 11) * 0x1.0p-53 < options_.device_decode_share;
}

void ImageBatches::fill(const std::vector<Slot*>& slots, int64_t epoch, const int32_t* order,
                        int64_t first_batch) {
  const int height = options_.height, width = options_.width;
  const float scale = 1.0f / 255.0f;  // Keras' rescale=1./255
  const int64_t batch = options_.batch_size, first = first_batch * batch;
  // Every batch of the group is whole but the epoch's last, which is the group's last.
  const int64_t count = std::min(static_cast<int64_t>(slots.size()) * batch, samples_per_epoch() - first);
  const auto slot_of = [&](int64_t k) -> Slot& { return *slots[static_cast<size_t>(k / batch)]; };
  const auto sample_of = [&](int64_t k) { return static_cast<size_t>(order[first + k]); };
  // The image's bytes in its slot: where a decoder writes them when the slot has bytes.
  const auto bytes_of = [&](int64_t k) {
    Slot& slot = slot_of(k);
    return slot.pixels ? slot.pixels + (k % batch) * image_bytes_ : nullptr;
  };

  // The group's images: those nvJPEG is to take (their files read first), the rest the workers'.
  std::vector<int64_t> on_device, on_host;
  for (int64_t k = 0; k < count; ++k) {
    const bool device = device_decoder_ && device_decodes(static_cast<int32_t>(sample_of(k)));
    (device ? on_device : on_host).push_back(k);
  }
  std::vector<std::vector<uint8_t>> files(on_device.size());
  std::vector<uint8_t> taken(on_device.size(), 0);  // whether nvJPEG decoded it

  double decode = 0.0, augment = 0.0, device_seconds = 0.0;
  std::exception_ptr failure;
  const auto record_failure = [&] {
#pragma omp critical(image_batches_failure)
    if (!failure) failure = std::current_exception();
  };
  // Its label and transform, the image's first touch.
  const auto label_and_transform = [&](int64_t k) {
    Slot& slot = slot_of(k);
    const int64_t i = k % batch;
    const size_t sample = sample_of(k);
    slot.labels[i] = static_cast<float>(folder_.labels[sample]);
    const std::array<float, 6> m =
        options_.augment ? transform_for(options_.augment_config, height, width, options_.seed, epoch,
                                         static_cast<int64_t>(sample))
                         : identity_transform();
    if (options_.augment_on_device) std::copy(m.begin(), m.end(), slot.transforms + i * 6);
    return m;
  };
  // The workers' part of an image: decode it (from `file` where read already) unless cached or
  // decoded by the GPU, then augment it here unless the device does.
  const auto finish_on_host = [&](int64_t k, const std::array<float, 6>& m, const std::vector<uint8_t>* file,
                                  bool decoded, std::vector<uint8_t>& scratch, double& decode_s, double& augment_s) {
    const size_t sample = sample_of(k);
    const auto start = std::chrono::steady_clock::now();
    const uint8_t* pixels = bytes_of(k);
    if (!cache_.empty()) {
      pixels = cache_.data() + static_cast<int64_t>(sample) * image_bytes_;
      if (options_.augment_on_device) {
        std::memcpy(bytes_of(k), pixels, static_cast<size_t>(image_bytes_));
      }
    } else if (!decoded) {
      uint8_t* target = bytes_of(k);
      if (!target) {
        scratch.resize(static_cast<size_t>(image_bytes_));
        target = scratch.data();
      }
      const std::string& path = folder_.paths[sample];
      if (file) {
        decode_jpeg(file->data(), file->size(), path, height, width, target);
      } else {
        decode_jpeg_file(path, height, width, target);
      }
      pixels = target;
    }
    const auto decoded_at = std::chrono::steady_clock::now();
    decode_s += seconds_between(start, decoded_at);
    if (!options_.augment_on_device) {
      augment_image(pixels, height, width, kChannels, m.data(), scale, slot_of(k).values + (k % batch) * image_bytes_);
      augment_s += seconds_between(decoded_at, std::chrono::steady_clock::now());
    }
  };

  if (!on_device.empty()) {  // the GPU's files into memory, on every worker
#pragma omp parallel for num_threads(options_.workers) schedule(dynamic) reduction(+ : decode)
    for (size_t j = 0; j < on_device.size(); ++j) {
      try {
        const auto start = std::chrono::steady_clock::now();
        files[j] = read_image_file(folder_.paths[sample_of(on_device[j])]);
        decode += seconds_between(start, std::chrono::steady_clock::now());
      } catch (...) {
        record_failure();
      }
    }
    if (failure) std::rethrow_exception(failure);
  }
  // One worker drives nvJPEG over its files while the others decode theirs, joining them after.
  // (Two workers, each with a decoder of its own over half the files, took no more images a
  // second on the H200 host: ~19,000 together.)
#pragma omp parallel num_threads(options_.workers) reduction(+ : decode, augment)
  {
    std::vector<uint8_t> scratch;  // this worker's image, when neither cached nor sent as bytes
#pragma omp single nowait
    if (!on_device.empty()) {
      try {
        std::vector<const std::vector<uint8_t>*> pointers;
        std::vector<uint8_t*> targets;
        for (size_t j = 0; j < on_device.size(); ++j) {
          pointers.push_back(&files[j]);
          targets.push_back(bytes_of(on_device[j]));
        }
        const auto start = std::chrono::steady_clock::now();
        const std::vector<bool> decoded = device_decoder_->decode(pointers, targets);
        device_seconds = seconds_between(start, std::chrono::steady_clock::now());
        for (size_t j = 0; j < on_device.size(); ++j) taken[j] = decoded[j] ? 1 : 0;
      } catch (...) {
        record_failure();
      }
    }
#pragma omp for schedule(dynamic) nowait
    for (size_t j = 0; j < on_host.size(); ++j) {
      try {
        const int64_t k = on_host[j];
        finish_on_host(k, label_and_transform(k), nullptr, false, scratch, decode, augment);
      } catch (...) {
        record_failure();
      }
    }
  }
  if (failure) std::rethrow_exception(failure);
  // The GPU's images: labels and transforms, and the files it handed back decoded here.
  int64_t device_decoded = 0;
  if (!on_device.empty()) {
#pragma omp parallel num_threads(options_.workers) reduction(+ : decode, augment, device_decoded)
    {
      std::vector<uint8_t> scratch;
#pragma omp for schedule(dynamic)
      for (size_t j = 0; j < on_device.size(); ++j) {
        try {
          const int64_t k = on_device[j];
          finish_on_host(k, label_and_transform(k), &files[j], taken[j] != 0, scratch, decode, augment);
          device_decoded += taken[j];
        } catch (...) {
          record_failure();
        }
      }
    }
    if (failure) std::rethrow_exception(failure);
  }
  for (size_t j = 0; j < slots.size(); ++j) {
    slots[j]->count = std::min(batch, count - static_cast<int64_t>(j) * batch);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  decode_seconds_ += decode;
  augment_seconds_ += augment;
  images_prepared_ += count;
  device_decoded_ += device_decoded;
  device_decode_seconds_ += device_seconds;
}

void ImageBatches::release_copied_slots(size_t keep) {
  DeviceServices& services = device_services(device_);
  while (in_flight_.size() > keep) {
    Slot* slot = in_flight_.front();
    in_flight_.pop_front();
    services.fence_wait(slot->fence);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      free_.push_back(slot);
    }
    changed_.notify_all();
  }
}

int64_t ImageBatches::next() {
  ENGINE_CHECK(producer_.joinable(), "next() before start_epoch()");
  ENGINE_CHECK(taken_ < steps_, "next() called after the epoch's last batch");
  DeviceServices& services = device_services(device_);
  // Everything queued so far: the steps the device may still be running while we wait.
  const uint64_t queued = services.record_fence();
  // The batch handed over last time may still be on its way to the device; the one before
  // it has arrived (or is about to): its slot can be refilled.
  release_copied_slots(1);
  Slot* slot = nullptr;
  {
    // Data wait is the time the *device* sits idle for want of input: waiting here while it
    // still runs queued steps costs nothing. So the clock starts when the device has reached
    // `queued`, checked every 50 us while the batch is not ready (at once on the CPU).
    std::unique_lock<std::mutex> lock(mutex_);
    auto idle_since = std::chrono::steady_clock::time_point::max();
    const auto note_idle = [&] {
      if (idle_since == std::chrono::steady_clock::time_point::max() && services.fence_reached(queued)) {
        idle_since = std::chrono::steady_clock::now();
      }
    };
    while (!failure_ && ready_.empty()) {
      note_idle();
      changed_.wait_for(lock, std::chrono::microseconds(50));
    }
    if (idle_since != std::chrono::steady_clock::time_point::max()) {
      wait_seconds_ += seconds_between(idle_since, std::chrono::steady_clock::now());
    }
    if (failure_) std::rethrow_exception(failure_);
    slot = ready_.front();
    ready_.pop_front();
  }
  ENGINE_CHECK(slot->epoch == epoch_, "the loader's batch of epoch ", slot->epoch,
               " arrived in epoch ", epoch_);
  ++taken_;
  const int64_t count = slot->count;
  const int64_t values = count * image_bytes_;
  const Copy async = Copy::pinned_host_to_device_async;
  copy_bytes(services, async, y_.raw_data(), slot->labels, static_cast<size_t>(count) * sizeof(float));
  if (options_.augment_on_device) {
    copy_bytes(services, async, device_pixels_.raw_data(), slot->pixels, static_cast<size_t>(values));
    copy_bytes(services, async, device_transforms_.raw_data(), slot->transforms,
               static_cast<size_t>(count) * 6 * sizeof(float));
    const Shape images = {count, options_.height, options_.width, kChannels};
    Tensor out = x_.slice(0, images);
    raw::augment_images(device_pixels_.slice(0, images), device_transforms_.slice(0, {count, 6}), out,
                        1.0f / 255.0f);
  } else {
    copy_bytes(services, async, x_.raw_data(), slot->values, static_cast<size_t>(values) * sizeof(float));
  }
  slot->fence = services.record_fence();
  in_flight_.push_back(slot);
  return count;
}

double ImageBatches::decode_seconds() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return decode_seconds_;
}

int64_t ImageBatches::images_prepared() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return images_prepared_;
}

double ImageBatches::augment_seconds() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return augment_seconds_;
}

int64_t ImageBatches::device_decoded_images() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return device_decoded_;
}

double ImageBatches::device_decode_seconds() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return device_decode_seconds_;
}

std::string ImageBatches::device_decoder_backend() const {
  return device_decoder_ ? device_decoder_->backend() : std::string();
}

}  // namespace engine::datasets
