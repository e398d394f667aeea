#include "apps/bench/published.h"

#include <sstream>

namespace engine::bench {
namespace {

struct Entry {
  const char* experiment;
  const char* key;
  // Which of our devices the figure compares with: TensorFlow and PyTorch on a GPU run on
  // cuBLAS/cuDNN, the nearest to both of ours; Theano (seed 004) ran "gpu" without cuDNN.
  const char* devices;
  Published figure;
};

// Seed 000's times are for 10 epochs plus evaluate (model.fit(epochs=10), model.evaluate,
// timed together): divided by 10, they are per epoch with a tenth of the evaluation added.
const Entry TABLE[] = {
    {"mnist_mlp", "small", "cpu",
     {5.24, "i5-6200U", "52.4 s for 10 epochs + evaluate", "docs/SOURCES.md, article 000"}},
    {"mnist_mlp", "small", "gpu cudnn",
     {12.28, "GeForce 940M", "122.8 s for 10 epochs + evaluate", "docs/SOURCES.md, article 000"}},
    {"mnist_mlp", "wide", "cpu",
     {39.0, "i5-6200U", "390.0 s for 10 epochs + evaluate", "docs/SOURCES.md, article 000"}},
    {"mnist_mlp", "wide", "gpu cudnn",
     {22.44, "GeForce 940M", "224.4 s for 10 epochs + evaluate", "docs/SOURCES.md, article 000"}},

    // Seed 001: torch.autograd.functional.jacobian's loop, wall time; the hardware is not named.
    {"jacobian_mlp", "val=100", "cpu",
     {11.1, "CPU not stated", "Wall time: 11.1 s (val = 100, CPU)", "docs/SOURCES.md, article 001"}},
    {"jacobian_mlp", "val=100", "gpu cudnn",
     {19.5, "GPU not stated", "Wall time: 19.5 s (val = 100, GPU)", "docs/SOURCES.md, article 001"}},
    {"jacobian_mlp", "val=1000", "cpu",
     {524.0, "CPU not stated", "Wall time: 8min 44s (val = 1000, CPU)", "docs/SOURCES.md, article 001"}},
    {"jacobian_mlp", "val=1000", "gpu cudnn",
     {192.0, "GPU not stated", "Wall time: 3min 12s (val = 1000, GPU)", "docs/SOURCES.md, article 001"}},

    // Seed 003 (Keras on TensorFlow, seconds per epoch). Its Colab TPU figure (382 s) has no
    // counterpart here.
    {"cifar10_cnn", "", "cpu", {320.0, "i5-8250u", "320s/epoch", "docs/SOURCES.md, article 003"}},
    {"cifar10_cnn", "", "cpu", {36.0, "i7-9700k", "36s/epoch", "docs/SOURCES.md, article 003"}},
    {"cifar10_cnn", "", "gpu cudnn", {36.0, "MX150", "36s/epoch", "docs/SOURCES.md, article 003"}},
    {"cifar10_cnn", "", "gpu cudnn", {16.0, "Colab GPU", "16s/epoch", "docs/SOURCES.md, article 003"}},
    {"cifar10_cnn", "", "gpu cudnn", {9.0, "GTX 1060", "9s/epoch", "docs/SOURCES.md, article 003"}},
    {"cifar10_cnn", "", "gpu cudnn", {4.0, "GTX 1080 Ti", "4s/epoch", "docs/SOURCES.md, article 003"}},

    // Seed 004 (Keras on Theano, seconds per epoch, on one laptop). cuDNN 5.0 and 5.1 gave the
    // same times; 5.1's are quoted.
    {"dogs_vs_cats", "", "cpu", {526.0, "i5-3210M", "526s per epoch", "docs/SOURCES.md, article 004"}},
    {"dogs_vs_cats", "", "gpu", {41.0, "GT 640M", "41s per epoch", "docs/SOURCES.md, article 004"}},
    {"dogs_vs_cats", "", "cudnn",
     {38.0, "GT 640M + cuDNN 5.1", "38s per epoch", "docs/SOURCES.md, article 004"}},
    {"mnist_cnn", "", "cpu", {58.0, "i5-3210M", "58s per epoch", "docs/SOURCES.md, article 004"}},
    {"mnist_cnn", "", "gpu", {18.0, "GT 640M", "18s per epoch", "docs/SOURCES.md, article 004"}},
    {"mnist_cnn", "", "cudnn",
     {9.0, "GT 640M + cuDNN 5.1", "9s per epoch", "docs/SOURCES.md, article 004"}},
};

bool lists(const char* devices, const std::string& device) {
  std::istringstream words(devices);
  for (std::string word; words >> word;) {
    if (word == device) return true;
  }
  return false;
}

}  // namespace

std::vector<Published> published(const std::string& experiment, const std::string& key,
                                 const std::string& device) {
  std::vector<Published> figures;
  for (const Entry& e : TABLE) {
    if (experiment == e.experiment && key == e.key && lists(e.devices, device)) {
      figures.push_back(e.figure);
    }
  }
  return figures;
}

}  // namespace engine::bench
