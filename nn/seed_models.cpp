#include "nn/seed_models.h"

#include "nn/layers.h"

namespace engine::nn {

Sequential seed_mlp(bool wide) {
  if (wide) {
    return Sequential{flatten(),
                      dense(1000, Activation::Relu),
                      dropout(0.2f),
                      dense(1000, Activation::Relu),
                      dropout(0.2f),
                      dense(10, Activation::Softmax)};
  }
  return Sequential{flatten(), dense(128, Activation::Relu), dropout(0.2f),
                    dense(10, Activation::Softmax)};
}

Sequential cifar10_cnn(bool relu) {
  const Activation conv = relu ? Activation::Relu : Activation::None;
  return Sequential{conv2d(32, 3, Padding::Same, conv),
                    conv2d(32, 3, Padding::Same, conv),
                    max_pool2d(2),
                    conv2d(64, 3, Padding::Same, conv),
                    conv2d(64, 3, Padding::Same, conv),
                    max_pool2d(2),
                    conv2d(128, 3, Padding::Same, conv),
                    conv2d(128, 3, Padding::Same, conv),
                    flatten(),
                    dropout(0.3f),
                    dense(128, Activation::Relu),
                    dense(10, Activation::Softmax)};
}

Sequential mnist_cnn() {
  return Sequential{conv2d(32, 3, Padding::Valid, Activation::Relu),
                    conv2d(64, 3, Padding::Valid, Activation::Relu),
                    max_pool2d(2),
                    dropout(0.25f),
                    flatten(),
                    dense(128, Activation::Relu),
                    dropout(0.5f),
                    dense(10, Activation::Softmax)};
}

Sequential dogs_vs_cats_cnn() {
  return Sequential{conv2d(32, 3, Padding::Valid, Activation::Relu),
                    max_pool2d(2),
                    conv2d(32, 3, Padding::Valid, Activation::Relu),
                    max_pool2d(2),
                    conv2d(64, 3, Padding::Valid, Activation::Relu),
                    max_pool2d(2),
                    flatten(),
                    dense(64, Activation::Relu),
                    dropout(0.5f),
                    dense(1, Activation::Sigmoid)};
}

}  // namespace engine::nn
