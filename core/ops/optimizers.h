// The optimizers' updates, each over a model's flat parameter buffer in one call, and the
// step counter they read. Implementations: cpu/optimizers.cpp, kernels/optimizers.cu.
#pragma once
#include <math.h>  // sqrt, pow, sqrtf: the same names in host and device code

#include <cstdint>

#include "core/host_device.h"
#include "core/tensor.h"

namespace engine {

// Adam's hyper-parameters. The step number t is not here: it is read from a counter on the
// device (raw::adam_update), so that a captured CUDA graph replays correct updates.
struct AdamConfig {
  float learning_rate;
  float beta1;
  float beta2;
  float epsilon;
};

// Keras' Adam step size for step t (1-based), in double: lr * sqrt(1 - b2^t) / (1 - b1^t).
// Every implementation folds the bias corrections in with this one function.
ENGINE_HOST_DEVICE double adam_step_size(const AdamConfig& config, int64_t t) {
  const double td = static_cast<double>(t);
  return config.learning_rate * sqrt(1.0 - pow(static_cast<double>(config.beta2), td)) /
         (1.0 - pow(static_cast<double>(config.beta1), td));
}

// One parameter's Adam update with gradient g and step size lr_t (adam_step_size): every Adam
// (cpu/optimizers.cpp, kernels/optimizers.cu and the fused MLP kernels) updates through this.
ENGINE_HOST_DEVICE void adam_apply(float& p, float& m, float& v, float g, const AdamConfig& c,
                                   float lr_t) {
  m = c.beta1 * m + (1.0f - c.beta1) * g;
  v = c.beta2 * v + (1.0f - c.beta2) * g * g;
  p -= lr_t * m / (sqrtf(v) + c.epsilon);
}

namespace raw {
// SGD with momentum (Keras): v = momentum * v - lr * g; p += v  (v unused when momentum 0).
void sgd_update(Tensor& param, const Tensor& grad, Tensor& velocity, float lr, float momentum);
// Adam (Keras): m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2; p -= lr_t m / (sqrt(v) + eps),
// lr_t = adam_step_size(config, t) with t = step[0] + 1 read on the device.
void adam_update(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const AdamConfig& config,
                 const Tensor& step);
// RMSprop (Keras): s = rho s + (1 - rho) g^2; p -= lr g / (sqrt(s) + eps).
void rmsprop_update(Tensor& param, const Tensor& grad, Tensor& mean_square, float lr, float rho,
                    float epsilon);
// Adadelta (Keras): s = rho s + (1 - rho) g^2; d = sqrt(u + eps) / sqrt(s + eps) * g;
// u = rho u + (1 - rho) d^2; p -= lr d.
void adadelta_update(Tensor& param, const Tensor& grad, Tensor& mean_square,
                     Tensor& mean_square_delta, float lr, float rho, float epsilon);
// counter[0] += 1 for an I32 scalar on the device (the step counter above).
void increment(Tensor& counter);
}  // namespace raw

namespace cpu {
void sgd_update(Tensor& param, const Tensor& grad, Tensor& velocity, float lr, float momentum);
void adam_update(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const AdamConfig& config,
                 const Tensor& step);
void rmsprop_update(Tensor& param, const Tensor& grad, Tensor& mean_square, float lr, float rho,
                    float epsilon);
void adadelta_update(Tensor& param, const Tensor& grad, Tensor& mean_square,
                     Tensor& mean_square_delta, float lr, float rho, float epsilon);
void increment(Tensor& counter);
}  // namespace cpu

namespace cuda {
void sgd_update(Tensor& param, const Tensor& grad, Tensor& velocity, float lr, float momentum);
void adam_update(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const AdamConfig& config,
                 const Tensor& step);
void rmsprop_update(Tensor& param, const Tensor& grad, Tensor& mean_square, float lr, float rho,
                    float epsilon);
void adadelta_update(Tensor& param, const Tensor& grad, Tensor& mean_square,
                     Tensor& mean_square_delta, float lr, float rho, float epsilon);
void increment(Tensor& counter);
}  // namespace cuda

}  // namespace engine
