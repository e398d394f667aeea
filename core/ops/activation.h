// Activations, alone and fused with a Dense layer's bias.
// Implementations: cpu/activation.cpp, kernels/activation.cu.
#pragma once
#include "core/tensor.h"

namespace engine {

enum class Activation { None, Relu, Tanh, Sigmoid, Softmax };
// "none", "relu", "tanh", "sigmoid", "softmax": as the profiler and the autograd nodes name them.
const char* activation_name(Activation act);

Tensor relu(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
// Relu/Tanh/Sigmoid/Softmax by name; None returns x itself.
Tensor activation(const Tensor& x, Activation act);
// x (N, F) + bias (F,), broadcast over rows.
Tensor add_bias(const Tensor& x, const Tensor& bias);
// act(x + bias) in one pass, act None/Relu/Tanh/Sigmoid: a Dense layer's epilogue.
Tensor bias_activation(const Tensor& x, const Tensor& bias, Activation act);
// GELU, x times the standard normal CDF of x (Hendrycks and Gimpel, 2016): the exact form,
// Keras' gelu(approximate=False).
Tensor gelu(const Tensor& x);

namespace raw {
// y[n, f] = act(x[n, f] + bias[f]), act None, Relu, Tanh or Sigmoid: a Dense layer's
// epilogue in one pass over the output.
void bias_activation_forward(Activation act, const Tensor& x, const Tensor& bias, Tensor& y);
// Its backward for act != None, from the forward output y: dx = act'(y) * dy and
// dbias[f] = sum_n dx[n, f], in one pass.
void bias_activation_backward(Activation act, const Tensor& y, const Tensor& dy, Tensor& dx,
                              Tensor& dbias);
// db[f] = sum_n dy[n, f]   (the bias gradient when act is None)
void sum_rows(const Tensor& dy, Tensor& db);
// Relu, Tanh or Sigmoid, elementwise. Backward uses the forward *output* y, which is
// enough for all three: relu' = [y > 0], tanh' = 1 - y^2, sigmoid' = y (1 - y).
void activation_forward(Activation act, const Tensor& x, Tensor& y);
void activation_backward(Activation act, const Tensor& y, const Tensor& dy, Tensor& dx);
// y = x Phi(x) = 0.5 x (1 + erf(x / sqrt 2)).
void gelu_forward(const Tensor& x, Tensor& y);
// dx = dy (Phi(x) + x phi(x)), phi the standard normal density. From the input x: unlike
// relu's, tanh's and sigmoid's, GELU's derivative is not a function of its output.
void gelu_backward(const Tensor& x, const Tensor& dy, Tensor& dx);
}  // namespace raw

namespace cpu {
void bias_activation_forward(Activation act, const Tensor& x, const Tensor& bias, Tensor& y);
void bias_activation_backward(Activation act, const Tensor& y, const Tensor& dy, Tensor& dx,
                              Tensor& dbias);
void sum_rows(const Tensor& dy, Tensor& db);
void activation_forward(Activation act, const Tensor& x, Tensor& y);
void activation_backward(Activation act, const Tensor& y, const Tensor& dy, Tensor& dx);
void gelu_forward(const Tensor& x, Tensor& y);
void gelu_backward(const Tensor& x, const Tensor& dy, Tensor& dx);
}  // namespace cpu

namespace cuda {
void bias_activation_forward(Activation act, const Tensor& x, const Tensor& bias, Tensor& y);
void bias_activation_backward(Activation act, const Tensor& y, const Tensor& dy, Tensor& dx,
                              Tensor& dbias);
void sum_rows(const Tensor& dy, Tensor& db);
void activation_forward(Activation act, const Tensor& x, Tensor& y);
void activation_backward(Activation act, const Tensor& y, const Tensor& dy, Tensor& dx);
void gelu_forward(const Tensor& x, Tensor& y);
void gelu_backward(const Tensor& x, const Tensor& dy, Tensor& dx);
}  // namespace cuda

}  // namespace engine
