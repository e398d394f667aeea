// Seed 004's Dogs vs Cats: a small CNN trained on 150x150 photos read from a folder tree,
// with Keras' ImageDataGenerator augmentation (rescale 1/255, shear 0.2, zoom 0.2, flips).
//   Conv2D(32, 3, valid, relu) -> MaxPool(2) -> Conv2D(32, 3) relu -> MaxPool(2)
//   -> Conv2D(64, 3) relu -> MaxPool(2) -> Flatten (17*17*64) -> Dense(64, relu)
//   -> Dropout(0.5) -> Dense(1, sigmoid)
// Binary cross-entropy (fused with the sigmoid), RMSprop (Keras defaults), batch 32, 2,000
// training and 800 validation images per epoch, 50 epochs; 1,212,513 parameters at 150x150.
// The article measured seconds per epoch: CPU 526, GPU 41, GPU + cuDNN 38 (i5-3210m, GT 640M).
//
// At this size the model's arithmetic is small (about 1 TFLOP per epoch: tens of milliseconds
// on an H100), and decoding and augmenting the JPEGs is the real cost. The loader
// (datasets/image_batches.h) prepares batches on --workers threads while the device trains
// (with --decode-on gpu, nvJPEG on the GPU decodes about 40% of the JPEGs beside them), and
// every epoch reports how long the steps waited for data.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <numeric>
#include <sstream>
#include <utility>

#include "apps/common/app_flags.h"
#include "apps/common/app_options.h"
#include "apps/common/rank_launcher.h"
#include "apps/common/training_report.h"
#include "core/device_jpeg.h"
#include "core/device_services.h"
#include "datasets/image_batches.h"
#include "datasets/image_folder.h"
#include "nn/layers.h"
#include "nn/sequential.h"

using namespace engine;

namespace {


// fit()'s view of the loader: the loader's device tensors are the rows every step gathers,
// always all of them in order (the loader already shuffled), so the index is fixed. It has no
// state() for checkpoints: the loader's order and transforms depend only on (seed, epoch); its
// fingerprint is the loader's (its file list and labels).
class FolderBatches final : public nn::BatchSource {
 public:
  FolderBatches(datasets::ImageBatches& batches, Device device)
      : batches_(batches), rows_{batches.x(), batches.y()} {
    std::vector<int32_t> all(static_cast<size_t>(batches.batch_size()));
    std::iota(all.begin(), all.end(), 0);
    identity_ = Tensor::from_ints(all, {batches.batch_size()}, device);
  }
  int64_t size() const override { return batches_.samples_per_epoch(); }
  int64_t data_size() const override { return batches_.size(); }
  bool serves_ranks() const override { return true; }  // the loader makes only its shard
  const nn::Dataset& rows() const override { return rows_; }
  void start_epoch(int epoch, int64_t steps, int64_t batch, int64_t first_step) override {
    ENGINE_CHECK(batch == batches_.batch_size() || batches_.samples_per_epoch() < batch,
                 "the loader makes batches of ", batches_.batch_size(), ", fit asks for ", batch);
    batches_.start_epoch(epoch, steps, first_step);
  }
  Tensor next(int64_t first, int64_t count) override {
    (void)first;
    const int64_t got = batches_.next();
    ENGINE_CHECK(got == count, "the loader made a batch of ", got, ", fit expected ", count);
    return count == identity_.numel() ? identity_ : identity_.slice(0, {count});
  }
  double wait_seconds() const override { return batches_.wait_seconds(); }
  bool copies_from_host() const override { return true; }  // from the loader's pinned slots
  uint64_t fingerprint() const override { return batches_.fingerprint(); }

 private:
  datasets::ImageBatches& batches_;
  nn::Dataset rows_;
  Tensor identity_;
};

// Decoded images (count*H*W*3 bytes) as a resident set: x in [0, 1] (count, H, W, 3), y the
// class index as a float.
nn::Dataset to_float_dataset(const std::vector<uint8_t>& pixels, const std::vector<int32_t>& labels,
                             int64_t count, int side, Device device) {
  const int64_t per_image = int64_t{side} * side * 3;
  std::vector<float> x(static_cast<size_t>(count * per_image));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(pixels[i]) * (1.0f / 255.0f);
  std::vector<float> y(labels.begin(), labels.begin() + count);
  return {Tensor::from_vector(x, {count, side, side, 3}, device),
          Tensor::from_vector(y, {count}, device)};
}

void warn_skipped(const datasets::ImageFolder& folder) {
  // describe_skipped's lines end without a newline: the last one needs its own.
  if (!folder.skipped.empty()) std::cout << datasets::describe_skipped(folder) << "\n";
}

// With --decode-on gpu: how much nvJPEG took, and its rate while decoding, beside the workers'.
void report_device_decoding(const datasets::ImageBatches& batches) {
  const int64_t on_gpu = batches.device_decoded_images();
  if (on_gpu == 0) return;
  const int64_t on_cpu = batches.images_prepared() - on_gpu;
  const double cpu_seconds = batches.decode_seconds();  // includes reading the GPU's files
  const double gpu_rate = static_cast<double>(on_gpu) / batches.device_decode_seconds();
  const double worker_rate = cpu_seconds > 0 ? static_cast<double>(on_cpu) / cpu_seconds : 0.0;
  std::printf("  decoded: %lld images by nvJPEG, %.0f images/s while its calls ran; %lld by "
              "%d workers, %.0f images/s a worker (reading every file included)\n",
              static_cast<long long>(on_gpu), gpu_rate, static_cast<long long>(on_cpu), batches.workers(),
              worker_rate);
  if (worker_rate > 0)
    std::printf("  at these rates nvJPEG and the workers would finish together at --gpu-decode-share %.2f\n",
                datasets::balanced_device_share(gpu_rate, worker_rate, batches.workers()));
}

// --data-scaling: the loader alone (decode + augment + transfer, no training) for each worker
// count, one pass over the training images each; prints images/s and, with a path, writes the
// table as a CSV at the end (main checked at the start that it can).
void data_scaling(const datasets::ImageFolder& train, Device device,
                  const datasets::ImageBatchOptions& base, const std::vector<int>& workers,
                  const std::string& csv_path) {
  std::printf("Loader throughput, %lld images of %dx%d, batch %lld, augment %s, no training:\n",
              static_cast<long long>(train.size()), base.height, base.width,
              static_cast<long long>(base.batch_size),
              !base.augment ? "off" : base.augment_on_device ? "on the device" : "on the CPU");
  std::printf("%8s %10s %12s %16s %16s\n", "workers", "seconds", "images/s", "decode ms/img",
              "augment ms/img");
  std::ostringstream csv;
  csv << "workers,seconds,images_per_second,decode_ms_per_image,augment_ms_per_image\n";
  for (const int w : workers) {
    datasets::ImageBatchOptions options = base;
    options.workers = w;
    datasets::ImageBatches batches(train, {}, device, options);
    const int64_t steps = (batches.size() + batches.batch_size() - 1) / batches.batch_size();
    const auto start = std::chrono::steady_clock::now();
    batches.start_epoch(1, steps);
    for (int64_t s = 0; s < steps; ++s) batches.next();
    device_services(device).synchronize();
    const double seconds = apps::seconds_since(start);
    const double images = static_cast<double>(batches.size());
    const double decode_ms = batches.decode_seconds() / images * 1e3;
    const double augment_ms = batches.augment_seconds() / images * 1e3;
    std::printf("%8d %10.3f %12.0f %16.3f %16.3f\n", w, seconds, images / seconds, decode_ms,
                augment_ms);
    report_device_decoding(batches);
    csv << w << "," << seconds << "," << images / seconds << "," << decode_ms << ","
        << augment_ms << "\n";
  }
  if (csv_path.empty()) return;
  apps::write_text_file(csv_path, csv.str());
  std::printf("Wrote %s\n", csv_path.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  apps::Flags flags{"Seed 004: Dogs vs Cats CNN from a JPEG folder, with augmentation, on CPU, GPU "
                    "or cuDNN",
                    "dogs_vs_cats"};
  apps::CommonOptions options;
  options.dataset = "folder";
  options.data_dir = "data/dogs_vs_cats";
  options.batch_size = 32;
  options.epochs = 50;
  int64_t validation_steps = 0;
  int workers = 0, prefetch = 8, image_size = 150;
  bool cache = false, no_augment = false, strict = false, no_graph = false;
  std::string augment_on = "cpu", decode_on = "cpu", scaling_csv;
  double gpu_decode_share = 0.4;
  std::vector<int> scaling;
  apps::add_common_flags(flags, options, {"folder"});
  flags.describe("--data-dir",
                 "the Keras layout: DIR/train/<class>/*.jpg and DIR/validation/<class>/*.jpg "
                 "(datasets/make_dogs_cats writes one)");
  flags.option("--validation-steps", validation_steps,
               "validation batches per epoch (0: every validation image, 800 / batch size)")
      .check(apps::finite_in(int64_t{0}, int64_t{1} << 40));
  flags.option("--workers", workers,
               "threads decoding and augmenting images (0: all cores but one, which the "
               "training thread needs)")
      .check(apps::finite_in(0, 1024));
  flags.option("--prefetch", prefetch,
               "batches prepared ahead of the training step (default 8; 64 with --decode-on gpu, "
               "whose groups of batches are larger)")
      .check(apps::finite_in(2, 64));
  flags.flag("--cache", cache, "decode every image once and keep the pixels in memory");
  flags.option("--augment-on", augment_on,
               "where the random shear/zoom/flip runs: cpu (the workers) or gpu (a kernel on "
               "the decoded bytes; needs --device gpu or cudnn)")
      .one_of({"cpu", "gpu"});
  flags.option("--decode-on", decode_on,
               "where the JPEGs are decoded every epoch: cpu (the workers, libjpeg-turbo) or gpu "
               "(nvJPEG for --gpu-decode-share of them, the workers for the rest; needs --device "
               "gpu or cudnn, a build with nvJPEG, and no --cache)")
      .one_of({"cpu", "gpu"});
  flags.option("--gpu-decode-share", gpu_decode_share,
               "with --decode-on gpu: the fraction of the images nvJPEG decodes (the same ones "
               "every epoch; default 0.4; the run's summary says which share would balance "
               "this machine's decoders)")
      .check(apps::finite_in(0.0, 1.0));
  flags.flag("--no-augment", no_augment, "train on the images as they are (rescale only)");
  flags.flag("--strict", strict, "stop at the first unreadable image instead of skipping it");
  flags.option("--image-size", image_size, "side of the square the images are resized to")
      .check(apps::finite_in(22, 1024));
  flags.option("--data-scaling", scaling,
               "measure the loader alone for these worker counts (e.g. 1,2,4,8,16) and exit")
      .delimiter(',')
      .check(apps::finite_in(1, 1024));
  flags.option("--data-scaling-csv", scaling_csv, "write --data-scaling's table here");
  apps::add_no_graph_flag(flags, no_graph);
  flags.footer("Without Kaggle's photos, make a synthetic tree first: make_dogs_cats --out DIR "
               "(docs/datasets/dogs_vs_cats.md says how to use the real data).");

  return apps::run_app(flags, argc, argv, [&]() {
    const Device device = apps::start_training(options);
    if (augment_on == "gpu" && device.is_cpu()) {
      throw apps::UsageError("--augment-on gpu needs --device gpu or cudnn");
    }
    if (decode_on == "gpu" && device.is_cpu()) {
      throw apps::UsageError("--decode-on gpu needs --device gpu or cudnn");
    }
    if (decode_on != "gpu" && flags.given("--gpu-decode-share")) {
      throw apps::UsageError(
          "--gpu-decode-share is the GPU's share with --decode-on gpu; without it the CPU decodes all");
    }
    if (decode_on == "gpu" && !DeviceJpegDecoder::built()) {
      throw apps::UsageError("--decode-on gpu: this build has no nvJPEG (the CUDA toolkit's libnvjpeg was not "
                             "found at configure time)");
    }
    if (decode_on == "gpu" && cache) {
      throw apps::UsageError("--decode-on gpu decodes every epoch; --cache decodes once: choose one");
    }
    if (decode_on == "gpu" && !flags.given("--prefetch")) prefetch = 64;
    apps::check_outputs({scaling_csv});  // start_training checked the common flags' files

    // Scan both folders (validation must have the training classes), then decode every image
    // once: that finds the bad files now, not in epoch 37, and fills the cache.
    const auto scan_start = std::chrono::steady_clock::now();
    datasets::ImageFolder train = datasets::scan_image_folder(options.data_dir + "/train");
    if (train.classes.size() != 2) {
      // Bad data, not a bad flag: exit 1 (issue 24, class 12).
      throw Error(options.data_dir + "/train has " + std::to_string(train.classes.size()) +
                  " class folders; this model is binary and needs exactly 2");
    }
    datasets::ImageFolder validation =
        datasets::scan_image_folder(options.data_dir + "/validation", train.classes);
    std::vector<uint8_t> train_pixels =
        datasets::decode_folder(train, image_size, image_size, workers, strict);
    std::vector<uint8_t> validation_pixels =
        datasets::decode_folder(validation, image_size, image_size, workers, strict);
    warn_skipped(train);
    warn_skipped(validation);
    std::printf("Data: %s: %lld training images (%s %lld, %s %lld), %lld validation; decoded and "
                "checked in %.2f s\n",
                options.data_dir.c_str(), static_cast<long long>(train.size()),
                train.classes[0].c_str(),
                static_cast<long long>(std::count(train.labels.begin(), train.labels.end(), 0)),
                train.classes[1].c_str(),
                static_cast<long long>(std::count(train.labels.begin(), train.labels.end(), 1)),
                static_cast<long long>(validation.size()), apps::seconds_since(scan_start));

    datasets::ImageBatchOptions loader;
    loader.height = loader.width = image_size;
    loader.batch_size = options.batch_size;
    loader.workers = workers;
    loader.prefetch = prefetch;
    loader.augment = !no_augment;
    loader.augment_on_device = augment_on == "gpu";
    loader.decode_on_device = decode_on == "gpu";
    loader.device_decode_share = gpu_decode_share;
    loader.seed = options.seed;
    if (const Communicator* ranks = apps::rank_communicator()) {  // --gpus: this rank's shard
      loader.rank = ranks->rank();
      loader.world = ranks->world();
    }
    if (!scaling.empty()) {
      data_scaling(train, device, loader, scaling, scaling_csv);
      return 0;
    }

    // Validation: the first --validation-steps batches of the validation folder, rescaled only
    // (Keras' test generator), resident on the device.
    const int64_t validation_count =
        validation_steps > 0 ? std::min(validation.size(), validation_steps * options.batch_size)
                             : validation.size();
    const nn::Dataset validation_set =
        to_float_dataset(validation_pixels, validation.labels, validation_count, image_size, device);
    validation_pixels.clear();
    validation_pixels.shrink_to_fit();

    if (!cache) train_pixels.clear();
    datasets::ImageBatches batches(train, std::move(train_pixels), device, loader);
    FolderBatches source(batches, device);
    std::printf("Loader: %d workers, %d batches ahead, %s, augmentation %s\n",
                batches.workers(), prefetch,
                cache                 ? "decoded once (--cache)"
                : decode_on == "gpu" ? "decoding every epoch, on the CPU and the GPU"
                                     : "decoding every epoch",
                no_augment ? "off" : augment_on == "gpu" ? "on the GPU" : "on the CPU");
    if (decode_on == "gpu") {
      std::printf("GPU decoding: nvJPEG (%s) takes %.0f%% of the images (gray and CMYK files go to the "
                  "workers); its pixels differ from libjpeg-turbo's by about half a unit of 255\n",
                  batches.device_decoder_backend().c_str(), 100.0 * gpu_decode_share);
    }

    // The article's Keras model, top to bottom (its separate Activation('relu') and
    // Activation('sigmoid') layers are the activations of the layers before them here);
    // 1,212,513 parameters at 150x150.
    nn::Sequential model{
        // three blocks: a 3x3 convolution without padding, then pooling
        nn::conv2d(32, 3, Padding::Valid, Activation::Relu),
        nn::max_pool2d(2),
        nn::conv2d(32, 3, Padding::Valid, Activation::Relu),
        nn::max_pool2d(2),
        nn::conv2d(64, 3, Padding::Valid, Activation::Relu),
        nn::max_pool2d(2),
        // the classifier: one hidden layer, dropout, one sigmoid output
        nn::flatten(),
        nn::dense(64, Activation::Relu),
        nn::dropout(0.5f),
        nn::dense(1, Activation::Sigmoid)
    };
    apps::TrainingPlan plan;
    plan.optimizer = std::make_unique<nn::RMSprop>();
    plan.loss = nn::Loss::BinaryCrossentropy;
    plan.validation = &validation_set;
    plan.use_graph = !no_graph;
    plan.eval_batch_size = options.batch_size;
    plan.test_name = "Validation";
    plan.article = "the article: CPU 526, GPU 41, GPU + cuDNN 38 (i5-3210m, GT 640M)";
    const Shape image = {image_size, image_size, 3};
    const apps::TrainingRun run = apps::train_and_report(model, image, device, options, source,
                                                         validation_set, std::move(plan));

    // Where each epoch's time went: waiting for the loader, or the steps themselves (with
    // --breakdown, its finer table above has said it).
    if (!options.breakdown) {
      for (const nn::EpochRecord& e : run.history.epochs) {
        const double compute = e.seconds - e.data_wait_seconds;
        std::printf("Epoch %d: %.3f s = data wait %.3f s (%.1f%%) + compute %.3f s; validation "
                    "%.3f s\n",
                    e.epoch, e.seconds, e.data_wait_seconds,
                    e.seconds > 0 ? 100.0 * e.data_wait_seconds / e.seconds : 0.0, compute,
                    e.val_seconds);
      }
    }
    // Per image the loader worked on in this process (a resumed run did not make the epochs
    // before it; batches made ahead count too, as their work is in the sums).
    if (batches.images_prepared() > 0) {
      const double images = static_cast<double>(batches.images_prepared());
      std::printf("Loader work per image (summed over workers): decode %.3f ms, augment %.3f ms\n",
                  batches.decode_seconds() / images * 1e3, batches.augment_seconds() / images * 1e3);
      report_device_decoding(batches);
    }
    apps::write_run_json(options, device, model, run,
                         {{"app", "dogs_vs_cats"},
                          {"data", options.data_dir},
                          {"train_samples", train.size()},
                          {"validation_samples", validation_set.size()},
                          {"skipped_files", train.skipped.size() + validation.skipped.size()},
                          {"workers", batches.workers()},
                          {"cache", cache},
                          {"augment", no_augment ? "off" : augment_on},
                          {"decode", cache ? "cached" : decode_on},
                          {"gpu_decode_share", decode_on == "gpu" ? gpu_decode_share : 0.0},
                          {"gpu_decoded_images", batches.device_decoded_images()},
                          {"image_size", image_size}});
    return 0;
  });
}
