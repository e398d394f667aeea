// What both programs share: the data and the command line (the model they do not: it travels
// in the model file).
//
// Two interleaved spirals in the plane: class 0 and class 1 wind twice around the origin, half
// a turn apart, and each point is jittered by about 0.05 in each coordinate, so that a few
// points lie nearer the other spiral: no model gets every point right. Points are drawn from the engine's
// Philox generator, so a seed gives the same points on every machine: train_classifier trains
// on seed 1, predict tests on seed 2, points the model has never seen.
#pragma once
#include <engine/core/device_services.h>
#include <engine/core/rng.h>
#include <engine/core/tensor.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

// Both programs take `PROGRAM MODEL_FILE [--gpu]`. Sets the file and the device; false, having
// said why on stderr, for a wrong command line or a GPU that cannot be used.
inline bool read_command_line(int argc, char** argv, std::string* model_path,
                              engine::Device* device) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MODEL_FILE [--gpu]\n", argv[0]);
    return false;
  }
  *model_path = argv[1];
  *device = argc > 2 && std::string(argv[2]) == "--gpu" ? engine::Device::cuda()
                                                        : engine::Device::cpu();
  std::string why_not;
  if (!engine::device_available(*device, &why_not)) {
    std::fprintf(stderr, "no GPU to run on: %s\n", why_not.c_str());
    return false;
  }
  return true;
}

struct Points {
  engine::Tensor xy;      // (n, 2) float32: the coordinates
  engine::Tensor labels;  // (n,) int32: 0 or 1
};

// Roughly normal with standard deviation 0.05: the sum of three uniform numbers, centred.
inline float jitter(engine::Generator& rng) {
  return 0.1f * (rng.uniform() + rng.uniform() + rng.uniform() - 1.5f);
}

inline Points make_spirals(int64_t n, uint64_t seed) {
  const float pi = 3.14159265f;
  engine::Generator rng(seed);
  std::vector<float> xy;
  std::vector<int32_t> labels;
  for (int64_t i = 0; i < n; ++i) {
    const int32_t label = static_cast<int32_t>(i % 2);
    const float t = rng.uniform();                        // how far along the spiral, 0 to 1
    const float angle = 4.0f * pi * t + pi * static_cast<float>(label);
    const float radius = 0.1f + 0.9f * t;
    xy.push_back(radius * std::cos(angle) + jitter(rng));
    xy.push_back(radius * std::sin(angle) + jitter(rng));
    labels.push_back(label);
  }
  return {engine::Tensor::from_vector(xy, {n, 2}), engine::Tensor::from_ints(labels, {n})};
}
