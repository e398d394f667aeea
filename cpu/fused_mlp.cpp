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
// (recomputed from the counter, never stored) times ReLU's (out > 0). The Dropout and Adam are
// the CPU backend's own (cpu/dropout.cpp, cpu/optimizers.cpp), applied to views of the layer's
// rows and parameters: the masks and the update are theirs, bit for bit.
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/ops/dropout.h"
#include "core/ops/fused_mlp.h"

namespace engine::cpu {
namespace {

// The workspace as fused_mlp_workspace lays it out, as views.
struct Buffers {
  std::vector<Tensor> out, grad;  // per hidden layer: (B, units)
  float* dlogits = nullptr;       // (B, classes)
  float* row_loss = nullptr;      // (B,)
  float* row_hit = nullptr;       // (B,)
};

Buffers carve(const FusedMlpPlan& plan, int64_t batch, const Tensor& workspace) {
  const FusedMlpWorkspace at = fused_mlp_workspace(plan, batch);
  Buffers b;
  for (size_t l = 0; l + 1 < plan.layers.size(); ++l) {
    const int64_t units = plan.layers[l].units;
    b.out.push_back(workspace.slice(at.out[l], {batch, units}));
    b.grad.push_back(workspace.slice(at.grad[l], {batch, units}));
  }
  b.dlogits = workspace.data<float>() + at.dlogits;
  b.row_loss = workspace.data<float>() + at.row_loss;
  b.row_hit = workspace.data<float>() + at.row_hit;
  return b;
}

// g times the derivative of hidden layer `layer`'s Dropout and ReLU, in place: dropout's
// backward (its mask and scale, from the step counter), then zero where out <= 0 (a dropped
// element's out is 0 and its gradient 0 already).
void apply_mask(const FusedMlpLayer& layer, const Tensor& out, Tensor& g, const Tensor& step) {
  if (layer.dropout_rate > 0.0f) dropout_backward(g, g, layer.dropout_rate, layer.dropout_seed, step, 0);
  if (!layer.relu) return;
  const float* y = out.data<float>();
  float* d = g.data<float>();
  for (int64_t i = 0; i < g.numel(); ++i) d[i] = y[i] > 0.0f ? d[i] : 0.0f;
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
  Buffers buf = carve(plan, batch, workspace);
  int64_t largest = 0;  // the scratch gradient holds any one layer's
  for (const FusedMlpLayer& layer : layers) largest = std::max(largest, (layer.inputs + 1) * layer.units);
  Tensor gradient = Tensor::empty({largest}, DType::F32, Device::cpu());

  for (int64_t s = 0; s < steps; ++s) {
    const int32_t* rows = order.data<int32_t>() + s * batch;
    const auto x_row = [&](int64_t r) { return x.data<float>() + int64_t{rows[r]} * features; };
    // Layer l's input rows: the batch's images for layer 0, else the layer below's output.
    const auto input = [&](int64_t l) {
      return [&, l](int64_t r) {
        return l == 0 ? x_row(r)
                      : buf.out[static_cast<size_t>(l - 1)].data<float>() +
                            r * layers[static_cast<size_t>(l - 1)].units;
      };
    };
    // The gradient of layer l's output: g for a hidden layer, dlogits for the head.
    const auto output_grad = [&](int64_t l) {
      return l == L - 1 ? buf.dlogits : buf.grad[static_cast<size_t>(l)].data<float>();
    };
    // Adam on layer l: its kernel's gradient is in^T g, its bias's the column sums of g (the
    // bias is the kernel's last row, whose input is 1); then the CPU backend's Adam on the
    // layer's part of the buffers, at this step's counter.
    const auto adam_layer = [&](int64_t l) {
      const FusedMlpLayer& layer = layers[static_cast<size_t>(l)];
      const auto in = input(l);
      const float* g = output_grad(l);
      float* d = gradient.data<float>();
      for (int64_t k = 0; k <= layer.inputs; ++k) {
        for (int64_t c = 0; c < layer.units; ++c) {
          float sum = 0.0f;
          for (int64_t r = 0; r < batch; ++r) {
            sum += (k < layer.inputs ? in(r)[k] : 1.0f) * g[r * layer.units + c];
          }
          d[k * layer.units + c] = sum;
        }
      }
      const Shape shape{(layer.inputs + 1) * layer.units};
      Tensor p_view = params.slice(layer.offset, shape), m_view = m.slice(layer.offset, shape),
             v_view = v.slice(layer.offset, shape);
      adam_update(p_view, gradient.slice(0, shape), m_view, v_view, plan.adam, step_counter);
    };

    // forward
    for (int64_t l = 0; l + 1 < L; ++l) {
      const FusedMlpLayer& layer = layers[static_cast<size_t>(l)];
      const float* w = p + layer.offset;
      Tensor& out_view = buf.out[static_cast<size_t>(l)];
      float* out = out_view.data<float>();
      for (int64_t r = 0; r < batch; ++r) {
        const float* in = input(l)(r);
        for (int64_t c = 0; c < layer.units; ++c) {
          float z = 0.0f;
          for (int64_t k = 0; k < layer.inputs; ++k) z += in[k] * w[k * layer.units + c];
          z += w[layer.inputs * layer.units + c];
          out[r * layer.units + c] = layer.relu ? std::max(z, 0.0f) : z;
        }
      }
      if (layer.dropout_rate > 0.0f) {
        dropout_forward(out_view, out_view, layer.dropout_rate, layer.dropout_seed, step_counter, 0);
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
        Tensor& g_view = buf.grad[static_cast<size_t>(L - 2)];
        float* g = g_view.data<float>();
        for (int64_t r = 0; r < batch; ++r) {
          for (int64_t k = 0; k < head.inputs; ++k) {
            float d = 0.0f;
            for (int64_t c = 0; c < classes; ++c) d += buf.dlogits[r * classes + c] * w[k * classes + c];
            g[r * head.inputs + k] = d;
          }
        }
        apply_mask(layers[static_cast<size_t>(L - 2)], buf.out[static_cast<size_t>(L - 2)], g_view,
                   step_counter);
      }
    }

    // backward, from the top hidden layer down to the second
    for (int64_t l = L - 2; l >= 1; --l) {
      const FusedMlpLayer& layer = layers[static_cast<size_t>(l)];
      const float* w = p + layer.offset;
      const float* g_above = output_grad(l);
      Tensor& g_view = buf.grad[static_cast<size_t>(l - 1)];
      float* g = g_view.data<float>();
      for (int64_t r = 0; r < batch; ++r) {
        for (int64_t k = 0; k < layer.inputs; ++k) {
          float d = 0.0f;
          for (int64_t c = 0; c < layer.units; ++c) d += g_above[r * layer.units + c] * w[k * layer.units + c];
          g[r * layer.inputs + k] = d;
        }
      }
      apply_mask(layers[static_cast<size_t>(l - 1)], buf.out[static_cast<size_t>(l - 1)], g_view,
                 step_counter);
      adam_layer(l + 1);
    }

    // last: Adam on layers 1 and 0, and the sums
    if (L >= 2) adam_layer(1);
    adam_layer(0);
    float batch_loss = 0.0f, hits = 0.0f;
    for (int64_t r = 0; r < batch; ++r) {
      batch_loss += buf.row_loss[r];
      hits += buf.row_hit[r];
    }
    loss_sum.data<float>()[0] += batch_loss;
    correct.data<float>()[0] += hits;
    ++step_counter.data<int32_t>()[0];
  }
}

}  // namespace engine::cpu
