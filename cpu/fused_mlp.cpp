// The fused MLP steps on the CPU: the reference the GPU kernel (kernels/fused_mlp.cu) is
// checked against, read top to bottom. Each step runs the kernel's phases in the kernel's
// order, one plain loop each; what a phase reads and writes is what the kernel's grid-wide
// barriers separate:
//   forward    each hidden layer: z = in W + b, ReLU, Dropout          (one phase per layer)
//   head       per row: logits, softmax cross-entropy, loss, hit, dlogits = (p - onehot) / B,
//              and the gradient of the layer below: (dlogits W^T) * mask
//   backward   each hidden layer l from the top down to the second: the gradient of layer
//              l - 1's output, (g_l W_l^T) * mask; and Adam on layer l + 1, whose W nothing
//              reads any more this step
//   last       Adam on layers 1 and 0; the batch's loss and hits added to the sums
// "mask" is the derivative of what follows the layer's z: the Dropout's keep-and-scale
// (recomputed from the counter, never stored) times ReLU's (out > 0).
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/ops/fused_mlp.h"
#include "core/rng.h"

namespace engine::cpu {
namespace {

struct Buffers {
  std::vector<float*> out, grad;  // per hidden layer: (B, units)
  float* dlogits = nullptr;       // (B, classes)
  float* row_loss = nullptr;      // (B,)
  float* row_hit = nullptr;       // (B,)
};

Buffers carve(const FusedMlpPlan& plan, int64_t batch, float* w) {
  Buffers b;
  for (size_t l = 0; l + 1 < plan.layers.size(); ++l) {
    b.out.push_back(w);
    w += batch * plan.layers[l].units;
    b.grad.push_back(w);
    w += batch * plan.layers[l].units;
  }
  b.dlogits = w;
  w += batch * plan.layers.back().units;
  b.row_loss = w;
  b.row_hit = w + batch;
  return b;
}

// d(out)/d(z) of hidden layer `layer` at (r, c): Dropout's keep * scale, times ReLU's.
float mask(const FusedMlpLayer& layer, const float* out, int64_t r, int64_t c, uint32_t step) {
  const int64_t i = r * layer.units + c;
  float d = layer.relu && !(out[i] > 0.0f) ? 0.0f : 1.0f;
  if (layer.dropout_rate > 0.0f) {
    const bool keep = dropout_uniform(layer.dropout_seed, step, static_cast<uint64_t>(i)) >=
                      layer.dropout_rate;
    d = keep ? d * (1.0f / (1.0f - layer.dropout_rate)) : 0.0f;
  }
  return d;
}

// Adam on layer `layer`: its gradient is in^T g (the bias: the column sums of g), `in` the
// layer's input rows (row r at in(r)), g its output's gradient (B, units).
template <typename Input>
void adam_layer(const FusedMlpLayer& layer, const AdamConfig& adam, float lr_t, float* p, float* m,
                float* v, Input in, const float* g, int64_t batch) {
  for (int64_t k = 0; k <= layer.inputs; ++k) {
    for (int64_t c = 0; c < layer.units; ++c) {
      float grad = 0.0f;
      for (int64_t r = 0; r < batch; ++r) {
        grad += (k < layer.inputs ? in(r)[k] : 1.0f) * g[r * layer.units + c];
      }
      const int64_t i = layer.offset + k * layer.units + c;
      m[i] = adam.beta1 * m[i] + (1.0f - adam.beta1) * grad;
      v[i] = adam.beta2 * v[i] + (1.0f - adam.beta2) * grad * grad;
      p[i] -= lr_t * m[i] / (std::sqrt(v[i]) + adam.epsilon);
    }
  }
}

}  // namespace

void fused_mlp_steps(const FusedMlpPlan& plan, Tensor& params, Tensor& m, Tensor& v,
                     const Tensor& x, const Tensor& labels, const Tensor& order, int64_t batch,
                     int64_t steps, Tensor& step_counter, Tensor& workspace, Tensor& loss_sum,
                     Tensor& correct) {
  const std::vector<FusedMlpLayer>& layers = plan.layers;
  const int64_t L = static_cast<int64_t>(layers.size());
  const FusedMlpLayer& head = layers.back();
  const int64_t classes = head.units, features = layers.front().inputs;
  float* p = params.data<float>();
  const Buffers buf = carve(plan, batch, workspace.data<float>());
  int32_t* counter = step_counter.data<int32_t>();

  for (int64_t s = 0; s < steps; ++s) {
    const int32_t* rows = order.data<int32_t>() + s * batch;
    const auto step = static_cast<uint32_t>(*counter);
    const auto lr_t = static_cast<float>(adam_step_size(plan.adam, int64_t{*counter} + 1));
    const auto x_row = [&](int64_t r) { return x.data<float>() + int64_t{rows[r]} * features; };
    // Layer l's input rows: the batch's images for layer 0, else the layer below's output.
    const auto input = [&](int64_t l) {
      return [&, l](int64_t r) {
        return l == 0 ? x_row(r) : buf.out[static_cast<size_t>(l - 1)] + r * layers[static_cast<size_t>(l - 1)].units;
      };
    };

    // forward
    for (int64_t l = 0; l + 1 < L; ++l) {
      const FusedMlpLayer& layer = layers[static_cast<size_t>(l)];
      const float* w = p + layer.offset;
      float* out = buf.out[static_cast<size_t>(l)];
      for (int64_t r = 0; r < batch; ++r) {
        const float* in = input(l)(r);
        for (int64_t c = 0; c < layer.units; ++c) {
          float z = 0.0f;
          for (int64_t k = 0; k < layer.inputs; ++k) z += in[k] * w[k * layer.units + c];
          z += w[layer.inputs * layer.units + c];
          float a = layer.relu ? std::max(z, 0.0f) : z;
          if (layer.dropout_rate > 0.0f) {
            const int64_t i = r * layer.units + c;
            const bool keep = dropout_uniform(layer.dropout_seed, step, static_cast<uint64_t>(i)) >=
                              layer.dropout_rate;
            a = keep ? a * (1.0f / (1.0f - layer.dropout_rate)) : 0.0f;
          }
          out[r * layer.units + c] = a;
        }
      }
    }

    // head
    {
      const float* w = p + head.offset;
      const float inv_batch = 1.0f / static_cast<float>(batch);
      std::vector<float> logits(static_cast<size_t>(classes));
      for (int64_t r = 0; r < batch; ++r) {
        const float* in = input(L - 1)(r);
        for (int64_t c = 0; c < classes; ++c) {
          float z = 0.0f;
          for (int64_t k = 0; k < head.inputs; ++k) z += in[k] * w[k * classes + c];
          logits[static_cast<size_t>(c)] = z + w[head.inputs * classes + c];
        }
        float top = logits[0];
        int64_t best = 0;
        for (int64_t c = 1; c < classes; ++c) {
          if (logits[static_cast<size_t>(c)] > top) {
            top = logits[static_cast<size_t>(c)];
            best = c;
          }
        }
        float sum = 0.0f;
        for (int64_t c = 0; c < classes; ++c) sum += std::exp(logits[static_cast<size_t>(c)] - top);
        const float lse = top + std::log(sum);
        const int32_t label = labels.data<int32_t>()[rows[r]];
        const bool valid = label >= 0 && label < classes;
        buf.row_loss[r] = valid ? lse - logits[static_cast<size_t>(label)] : NAN;
        buf.row_hit[r] = best == label ? 1.0f : 0.0f;
        for (int64_t c = 0; c < classes; ++c) {
          const float prob = std::exp(logits[static_cast<size_t>(c)] - lse);
          buf.dlogits[r * classes + c] = inv_batch * (prob - (c == label ? 1.0f : 0.0f));
        }
      }
      if (L >= 2) {
        const FusedMlpLayer& below = layers[static_cast<size_t>(L - 2)];
        for (int64_t r = 0; r < batch; ++r) {
          for (int64_t k = 0; k < head.inputs; ++k) {
            float d = 0.0f;
            for (int64_t c = 0; c < classes; ++c) d += buf.dlogits[r * classes + c] * w[k * classes + c];
            buf.grad[static_cast<size_t>(L - 2)][r * head.inputs + k] =
                d * mask(below, buf.out[static_cast<size_t>(L - 2)], r, k, step);
          }
        }
      }
    }

    // The gradient of layer l's output: g for a hidden layer, dlogits for the head.
    const auto output_grad = [&](int64_t l) {
      return l == L - 1 ? buf.dlogits : buf.grad[static_cast<size_t>(l)];
    };
    // backward, from the top hidden layer down to the second
    for (int64_t l = L - 2; l >= 1; --l) {
      const FusedMlpLayer& layer = layers[static_cast<size_t>(l)];
      const FusedMlpLayer& below = layers[static_cast<size_t>(l - 1)];
      const float* w = p + layer.offset;
      for (int64_t r = 0; r < batch; ++r) {
        for (int64_t k = 0; k < layer.inputs; ++k) {
          float d = 0.0f;
          for (int64_t c = 0; c < layer.units; ++c) {
            d += buf.grad[static_cast<size_t>(l)][r * layer.units + c] * w[k * layer.units + c];
          }
          buf.grad[static_cast<size_t>(l - 1)][r * layer.inputs + k] =
              d * mask(below, buf.out[static_cast<size_t>(l - 1)], r, k, step);
        }
      }
      adam_layer(layers[static_cast<size_t>(l + 1)], plan.adam, lr_t, p, m.data<float>(),
                 v.data<float>(), input(l + 1), output_grad(l + 1), batch);
    }

    // last: Adam on layers 1 and 0, and the sums
    if (L >= 2) {
      adam_layer(layers[1], plan.adam, lr_t, p, m.data<float>(), v.data<float>(), input(1),
                 output_grad(1), batch);
    }
    adam_layer(layers[0], plan.adam, lr_t, p, m.data<float>(), v.data<float>(), input(0),
               output_grad(0), batch);
    float batch_loss = 0.0f, hits = 0.0f;
    for (int64_t r = 0; r < batch; ++r) {
      batch_loss += buf.row_loss[r];
      hits += buf.row_hit[r];
    }
    loss_sum.data<float>()[0] += batch_loss;
    correct.data<float>()[0] += hits;
    ++*counter;
  }
}

}  // namespace engine::cpu
