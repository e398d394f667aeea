// Train a classifier and save the whole model, layers and weights, to one file.
//
//   train_classifier MODEL_FILE [--gpu]
//
// Learns which of two interleaved spirals (spirals.h) a point of the plane is on, from 1,000
// points, then writes MODEL_FILE with nn::save_model. The program `predict` loads that file
// and needs none of the code below that describes the model.
#include <engine/core/device_services.h>
#include <engine/nn/layers.h>
#include <engine/nn/model_file.h>
#include <engine/nn/sequential.h>

#include <cstdio>
#include <exception>
#include <iostream>
#include <memory>
#include <string>

#include "spirals.h"

using namespace engine;

int main(int argc, char** argv) {
  std::string model_path;
  Device device;
  // A wrong command line, or --gpu where no GPU can be used: one line said, status 2.
  if (!read_command_line(argc, argv, &model_path, &device)) return 2;

  try {
    const Points points = make_spirals(1000, /*seed=*/1);
    const nn::Dataset train{points.xy.to(device), points.labels.to(device)};

    // Two classes: a softmax over two outputs, trained with the sparse cross-entropy on the
    // integer labels.
    nn::Sequential model{nn::dense(64, Activation::Relu), nn::dense(64, Activation::Relu),
                         nn::dense(2, Activation::Softmax)};
    model.build({2}, device, /*seed=*/1);
    model.compile(std::make_unique<nn::Adam>(0.01f), nn::Loss::SparseCategoricalCrossentropy);
    model.summary(std::cout);

    nn::FitOptions options;
    options.epochs = 60;
    options.batch_size = 32;
    options.seed = 1;
    options.verbose = false;
    const nn::History history = model.fit(train, options);
    for (const nn::EpochRecord& epoch : history.epochs)
      if (epoch.epoch == 1 || epoch.epoch % 20 == 0)
        std::printf("epoch %3d  loss %.4f  accuracy %.4f\n", epoch.epoch, epoch.loss, epoch.accuracy);

    // The architecture and the weights, in one file (docs/model_format.md). The optimizer and
    // the loss are not part of it: the file is for predicting.
    nn::save_model(model, model_path);
    std::printf("saved the model to %s\n", model_path.c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
