// Regression losses: mean squared error and mean absolute error, one value per sample (Keras'
// reduction over the last axis), each fused into one forward and one backward op.
// Implementations: cpu/regression_loss.cpp, kernels/regression_loss.cu.
#pragma once
#include "core/tensor.h"

namespace engine {

// Per sample (take mean() for the batch loss), for pred and target of one shape: (N, F), or
// (N,) for a single output (F = 1). Returns (N,):
//   mean_squared_error:  loss[n] = (1/F) sum_f (pred[n, f] - target[n, f])^2
//   mean_absolute_error: loss[n] = (1/F) sum_f |pred[n, f] - target[n, f]|
// The target passes no gradient (it is data).
Tensor mean_squared_error(const Tensor& pred, const Tensor& target);
Tensor mean_absolute_error(const Tensor& pred, const Tensor& target);

namespace raw {
// pred, target: (N, F) or (N,) (F = 1), the same shape; loss: (N,). One fused op each way:
//   forward   loss[n] = (1/F) sum_f d^2          with d = pred[n, f] - target[n, f]
//   backward  dpred[n, f] = dloss[n] * 2 d / F
void mean_squared_error_forward(const Tensor& pred, const Tensor& target, Tensor& loss);
void mean_squared_error_backward(const Tensor& pred, const Tensor& target, const Tensor& dloss,
                                 Tensor& dpred);
//   forward   loss[n] = (1/F) sum_f |d|
//   backward  dpred[n, f] = dloss[n] * sign(d) / F,   0 where d = 0 (the subgradient Keras' takes)
void mean_absolute_error_forward(const Tensor& pred, const Tensor& target, Tensor& loss);
void mean_absolute_error_backward(const Tensor& pred, const Tensor& target, const Tensor& dloss,
                                  Tensor& dpred);
}  // namespace raw

namespace cpu {
void mean_squared_error_forward(const Tensor& pred, const Tensor& target, Tensor& loss);
void mean_squared_error_backward(const Tensor& pred, const Tensor& target, const Tensor& dloss,
                                 Tensor& dpred);
void mean_absolute_error_forward(const Tensor& pred, const Tensor& target, Tensor& loss);
void mean_absolute_error_backward(const Tensor& pred, const Tensor& target, const Tensor& dloss,
                                  Tensor& dpred);
}  // namespace cpu

namespace cuda {
void mean_squared_error_forward(const Tensor& pred, const Tensor& target, Tensor& loss);
void mean_squared_error_backward(const Tensor& pred, const Tensor& target, const Tensor& dloss,
                                 Tensor& dpred);
void mean_absolute_error_forward(const Tensor& pred, const Tensor& target, Tensor& loss);
void mean_absolute_error_backward(const Tensor& pred, const Tensor& target, const Tensor& dloss,
                                  Tensor& dpred);
}  // namespace cuda

}  // namespace engine
