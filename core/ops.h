// Differentiable ops: each checks its inputs, allocates its output on the inputs' device,
// runs the backend's implementation (core/backend.h) and records a Node for backward.
// This is the API that nn/ builds layers from; it never names a backend.
#pragma once
#include <cstdint>

#include "core/backend.h"
#include "core/rng.h"
#include "core/tensor.h"

namespace engine {

// ---- linear algebra ---------------------------------------------------------------------
// op(a) @ op(b) for 2-D tensors, op = transpose when the flag is set.
Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a = false, bool transpose_b = false);
// x (N, F) + bias (F,), broadcast over rows.
Tensor add_bias(const Tensor& x, const Tensor& bias);
// act(x + bias) in one pass, act None/Relu/Tanh/Sigmoid: a Dense layer's epilogue.
Tensor bias_activation(const Tensor& x, const Tensor& bias, Activation act);

// ---- convolutions and pooling: NHWC, Keras filters and padding (core/conv_geometry.h) ----
// x (N, H, W, C) convolved with filters w (kh, kw, C, out_c) at `stride` on both axes ->
// (N, out_h, out_w, out_c). No bias: a Conv2D layer adds it with bias_activation on the
// output viewed as (N * out_h * out_w, out_c).
Tensor conv2d(const Tensor& x, const Tensor& w, int64_t stride, Padding padding);
// Max over pool x pool windows of x (N, H, W, C) -> (N, out_h, out_w, C), like Keras'
// MaxPooling2D(pool): stride = pool, padding valid. The general form takes any stride
// (windows may overlap) and padding (padded positions never win).
Tensor max_pool2d(const Tensor& x, int64_t pool);
Tensor max_pool2d(const Tensor& x, int64_t pool, int64_t stride, Padding padding);

// ---- elementwise ------------------------------------------------------------------------
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor scale(const Tensor& x, float factor);
Tensor relu(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
// Relu/Tanh/Sigmoid/Softmax by name; None returns x itself.
Tensor activation(const Tensor& x, Activation act);

// ---- row-wise ---------------------------------------------------------------------------
Tensor softmax(const Tensor& x);      // (N, C) -> (N, C)
Tensor log_softmax(const Tensor& x);  // (N, C) -> (N, C)

// ---- losses (per sample; take mean() for the batch loss) --------------------------------
// -log softmax(logits)[n, labels[n]] for logits (N, C), labels I32 (N,) in [0, C).
Tensor sparse_softmax_cross_entropy(const Tensor& logits, const Tensor& labels);
// -(t log p + (1 - t) log(1 - p)) elementwise, p clipped to [1e-7, 1 - 1e-7] like Keras.
Tensor binary_cross_entropy(const Tensor& p, const Tensor& target);
// The same loss from a sigmoid head's logits, fused with the sigmoid and numerically stable
// (core/backend.h): per element, shapes equal; what training uses for a sigmoid head.
Tensor sigmoid_binary_cross_entropy(const Tensor& logits, const Tensor& target);

// ---- regularisation ---------------------------------------------------------------------
// Where a dropout call's mask comes from: its own seed, and the training step read from an
// I32 scalar on x's device (backend.h says why it lives there). Same seed and step, same mask.
struct DropoutStream {
  uint64_t seed = 0;
  Tensor step;
};
// Inverted dropout when training, identity otherwise.
Tensor dropout(const Tensor& x, float rate, bool training, const DropoutStream& stream);

// ---- shape and reductions ---------------------------------------------------------------
Tensor reshape(const Tensor& x, const Shape& shape);  // same data, new shape (a view)
Tensor flatten(const Tensor& x);                       // (N, ...) -> (N, prod(...))
Tensor sum(const Tensor& x);                           // -> scalar, shape ()
Tensor mean(const Tensor& x);                          // -> scalar, shape ()

// ---- not differentiable -----------------------------------------------------------------
// Rows of x picked by index (I32): how batches are cut from a dataset on its device.
Tensor gather_rows(const Tensor& x, const Tensor& index);
// y[to(i, j, k)] = x[from(i, j, k)] for every (i, j, k) below `extent` (Walk3d: core/backend.h),
// for tensors of one 4-byte dtype on one device that do not share storage. Checks that both
// walks stay inside their tensors, then runs the backend's copy.
void strided_copy(const Tensor& x, Tensor& y, const std::array<int64_t, 3>& extent,
                  const Walk3d& from, const Walk3d& to);

}  // namespace engine
