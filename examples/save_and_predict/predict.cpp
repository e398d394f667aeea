// Load a saved model and predict: no layer, size or weight of the model appears here, all of
// it comes from the file that train_classifier wrote.
//
//   predict MODEL_FILE [--gpu]
//
// Classifies 400 new spiral points (spirals.h, another seed than the training points) and
// prints "accuracy: X", the fraction it got right.
#include <engine/core/device_services.h>
#include <engine/nn/model_file.h>
#include <engine/nn/sequential.h>

#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "spirals.h"

using namespace engine;

int main(int argc, char** argv) {
  std::string model_path;
  Device device;
  // A wrong command line, or --gpu where no GPU can be used: one line said, status 2.
  if (!read_command_line(argc, argv, &model_path, &device)) return 2;

  try {
    // The whole model, rebuilt from the file on the chosen device. A missing, damaged or
    // foreign file stops here with one line saying what is wrong with it.
    nn::Sequential model = nn::load_model(model_path, device);
    model.summary(std::cout);

    // Points it has never seen. predict() returns the softmax's probabilities, (400, 2).
    const Points points = make_spirals(400, /*seed=*/2);
    const std::vector<float> probabilities = model.predict(points.xy).to_vector();
    const std::vector<float> xy = points.xy.to_vector();
    const std::vector<int32_t> labels = points.labels.to_int_vector();

    // The predicted class is the more probable one.
    int64_t correct = 0;
    for (size_t i = 0; i < labels.size(); ++i) {
      const float p0 = probabilities[2 * i], p1 = probabilities[2 * i + 1];
      const int32_t predicted = p1 > p0 ? 1 : 0;
      if (predicted == labels[i]) ++correct;
      if (i < 5)
        std::printf("point (%6.3f, %6.3f): P(class 1) = %.3f -> class %d, truly %d\n", xy[2 * i],
                    xy[2 * i + 1], p1, predicted, labels[i]);
    }
    std::printf("accuracy: %.4f\n", static_cast<double>(correct) / static_cast<double>(labels.size()));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
