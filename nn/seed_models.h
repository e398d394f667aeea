// The models of the seed experiments (DESIGN.md section 1), defined once: the apps train them
// and the tests check their summaries and parameter counts against Keras' numbers.
#pragma once
#include "nn/sequential.h"

namespace engine::nn {

// Seed 000: Flatten -> Dense(128, relu) -> Dropout(0.2) -> Dense(10, softmax); `wide`: two
// Dense(1000, relu) layers, each followed by Dropout(0.2), instead of the one of 128.
Sequential seed_mlp(bool wide);

// Seed 003: Conv2D(32, 3, same) x2 -> MaxPool(2) -> Conv2D(64) x2 -> MaxPool(2) ->
// Conv2D(128) x2 -> Flatten -> Dropout(0.3) -> Dense(128, relu) -> Dense(10, softmax). The
// article's convolutions have no activation; `relu` adds one to each.
Sequential cifar10_cnn(bool relu = false);

// Seed 004's Keras MNIST CNN: Conv2D(32, 3, valid, relu) -> Conv2D(64, 3, valid, relu) ->
// MaxPool(2) -> Dropout(0.25) -> Flatten -> Dense(128, relu) -> Dropout(0.5) -> Dense(10, softmax).
Sequential mnist_cnn();

// Seed 004's Dogs vs Cats: Conv2D(32, 3, valid, relu) -> MaxPool(2) -> Conv2D(32) relu ->
// MaxPool -> Conv2D(64) relu -> MaxPool -> Flatten -> Dense(64, relu) -> Dropout(0.5) ->
// Dense(1, sigmoid).
Sequential dogs_vs_cats_cnn();

}  // namespace engine::nn
