#include "nn/sequential.h"

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <ostream>

#include "core/autograd.h"
#include "core/error.h"
#include "core/nvtx.h"
#include "core/ops.h"

namespace engine::nn {
namespace {

// Keras names layers by type in snake case, numbering repeats: dense, dense_1, dense_2.
// Its rule (keras to_snake_case) starts a word at a capital that follows a lower-case letter
// or begins a lower-case run, and digits do not start words: Conv2D -> conv2d,
// MaxPooling2D -> max_pooling2d.
std::string snake_case(const std::string& type) {
  const auto upper = [](char c) { return std::isupper(static_cast<unsigned char>(c)) != 0; };
  const auto lower = [](char c) { return std::islower(static_cast<unsigned char>(c)) != 0; };
  const auto lower_or_digit = [&](char c) {
    return lower(c) || std::isdigit(static_cast<unsigned char>(c)) != 0;
  };
  std::string out;
  for (size_t i = 0; i < type.size(); ++i) {
    const char c = type[i];
    const bool starts_word = i > 0 && upper(c) &&
                             (lower(type[i - 1]) || (i + 1 < type.size() && lower_or_digit(type[i + 1])));
    if (starts_word) out += '_';
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

std::string keras_shape(const Shape& per_sample) {
  std::string out = "(None";
  for (int64_t d : per_sample) out += ", " + std::to_string(d);
  return out + ")";
}

std::string with_commas(int64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// Glorot (Xavier) uniform: U(-limit, limit), limit = sqrt(6 / (fan_in + fan_out)).
void glorot_uniform(float* out, int64_t n, int64_t fan_in, int64_t fan_out, Generator& rng) {
  const double limit = std::sqrt(6.0 / static_cast<double>(fan_in + fan_out));
  for (int64_t i = 0; i < n; ++i) {
    out[i] = static_cast<float>((2.0 * rng.uniform() - 1.0) * limit);
  }
}

}  // namespace

Sequential::Sequential(std::initializer_list<std::shared_ptr<Layer>> layers)
    : Sequential(std::vector<std::shared_ptr<Layer>>(layers)) {}

Sequential::Sequential(std::vector<std::shared_ptr<Layer>> layers) : layers_(std::move(layers)) {
  ENGINE_CHECK(!layers_.empty(), "Sequential needs at least one layer");
  std::map<std::string, int> seen;
  for (auto& layer : layers_) {
    ENGINE_CHECK(layer != nullptr, "Sequential: null layer");
    const std::string base = snake_case(layer->type());
    const int k = seen[base]++;
    layer->set_name(k == 0 ? base : base + "_" + std::to_string(k));
  }
}

Device Sequential::device() const {
  ENGINE_CHECK(built(), "model not built yet: call build() first");
  return store_.values.device();
}

void Sequential::build(const Shape& input_shape, Device device, uint64_t seed) {
  ENGINE_CHECK(!built(), "model already built");
  input_shape_ = input_shape;
  seed_ = seed;
  Shape shape = input_shape;
  std::vector<std::pair<size_t, ParamSpec>> specs;  // (layer index, spec)
  int64_t total = 0;
  for (size_t i = 0; i < layers_.size(); ++i) {
    shape = layers_[i]->build(shape);
    output_shapes_.push_back(shape);
    for (ParamSpec& spec : layers_[i]->param_specs()) {
      total += engine::numel(spec.shape);
      specs.emplace_back(i, std::move(spec));
    }
  }
  output_shape_ = shape;

  // Initialise on the host from one stream, then copy once: the same weights on any device.
  std::vector<float> host(static_cast<size_t>(total), 0.0f);
  Generator init_rng(derive_seed(seed, 0));
  int64_t offset = 0;
  for (const auto& [layer, spec] : specs) {
    const int64_t n = engine::numel(spec.shape);
    if (spec.init == Init::GlorotUniform) {
      glorot_uniform(host.data() + offset, n, spec.fan_in, spec.fan_out, init_rng);
    }
    offset += n;
  }
  store_.values = Tensor::from_vector(host, {total}, device);
  store_.grads = Tensor::zeros({total}, DType::F32, device);
  step_ = Tensor::zeros({}, DType::I32, device);

  offset = 0;
  std::vector<Tensor> views;
  for (size_t k = 0; k < specs.size(); ++k) {
    const auto& [layer, spec] = specs[k];
    const int64_t n = engine::numel(spec.shape);
    Parameter p{layers_[layer]->name() + "/" + spec.name, store_.values.slice(offset, spec.shape),
                store_.grads.slice(offset, spec.shape)};
    p.value.set_requires_grad(true);
    p.value.set_grad(p.grad);  // backward accumulates straight into the flat gradient buffer
    store_.params.push_back(p);
    views.push_back(p.value);
    offset += n;
    const bool last_of_layer = k + 1 == specs.size() || specs[k + 1].first != layer;
    if (last_of_layer) {
      layers_[layer]->bind_parameters(views);
      views.clear();
    }
  }
}

void Sequential::summary(std::ostream& out) const {
  ENGINE_CHECK(built(), "summary() needs a built model");
  const std::string rule(65, '_'), double_rule(65, '=');
  char row[160];
  out << "Model: \"sequential\"\n" << rule << "\n";
  std::snprintf(row, sizeof row, " %-27s %-25s %-10s", "Layer (type)", "Output Shape", "Param #");
  out << row << "\n" << double_rule << "\n";
  for (size_t i = 0; i < layers_.size(); ++i) {
    int64_t count = 0;
    for (const ParamSpec& spec : layers_[i]->param_specs()) count += engine::numel(spec.shape);
    const std::string name = layers_[i]->name() + " (" + layers_[i]->type() + ")";
    std::snprintf(row, sizeof row, " %-27s %-25s %-10s", name.c_str(),
                  keras_shape(output_shapes_[i]).c_str(), std::to_string(count).c_str());
    out << row << "\n" << std::string(65, ' ') << "\n";  // Keras 2 puts a blank row after each layer
  }
  out << double_rule << "\n";
  out << "Total params: " << with_commas(parameter_count()) << "\n";
  out << "Trainable params: " << with_commas(parameter_count()) << "\n";
  out << "Non-trainable params: 0\n" << rule << "\n";
}

Tensor Sequential::forward(const Tensor& x, ForwardContext& ctx, bool logits) {
  ENGINE_CHECK(built(), "forward() needs a built model");
  ENGINE_CHECK(x.ndim() == static_cast<int>(input_shape_.size()) + 1 &&
                   Shape(x.shape().begin() + 1, x.shape().end()) == input_shape_,
               "model input must be (batch", keras_shape(input_shape_).substr(5), ", got ",
               to_string(x.shape()));
  // What the convolutions' forward passes need made from their filters, made for all of them
  // at once (on Hopper in TF32: one launch, not one a layer).
  std::vector<Tensor> filters;
  for (const auto& layer : layers_) {
    if (Tensor w = layer->conv_filters(); w.defined()) filters.push_back(w);
  }
  const PreparedConvFilters prepared(filters);
  Tensor h = x;
  for (size_t i = 0; i < layers_.size(); ++i) {
    ctx.skip_activation = logits && i + 1 == layers_.size();
    NvtxRange range((layers_[i]->type() + ".forward").c_str());  // "Dense.forward"
    h = layers_[i]->forward(h, ctx);
  }
  ctx.skip_activation = false;
  return h;
}

// No kernel: each gradient buffer is marked overwrite, and the backward pass writes the new
// gradients straight into it (a matmul's output, a bias's column sums).
void Sequential::zero_grad() {
  for (Parameter& p : store_.params) p.value.set_overwrite_grad(true);
}

void Sequential::zero_unreached_grads() {
  for (Parameter& p : store_.params) {
    if (!p.value.overwrite_grad()) continue;
    raw::fill(p.grad, 0.0f);  // backward never reached it: its gradient is 0
    p.value.set_overwrite_grad(false);
  }
}

void Sequential::set_step_counter(int64_t steps) {
  ENGINE_CHECK(built(), "set_step_counter() needs a built model");
  ENGINE_CHECK(steps >= 0 && steps <= INT32_MAX, "step counter ", steps, " out of range");
  step_.copy_from(Tensor::from_ints({static_cast<int32_t>(steps)}, {}, device()));
}

Optimizer& Sequential::optimizer() {
  ENGINE_CHECK(compiled_, "the model has no optimizer yet (call compile())");
  return *optimizer_;
}

void Sequential::compile(std::unique_ptr<Optimizer> optimizer, Loss loss) {
  ENGINE_CHECK(built(), "compile() needs a built model");
  ENGINE_CHECK(optimizer != nullptr, "compile() needs an optimizer");
  const Activation head = layers_.back()->activation();
  switch (loss) {
    case Loss::SparseCategoricalCrossentropy:
      ENGINE_CHECK(head == Activation::Softmax || head == Activation::None,
                   "sparse categorical cross-entropy needs a softmax (or linear, as logits) head");
      break;
    case Loss::BinaryCrossentropy:
      ENGINE_CHECK(head == Activation::Sigmoid, "binary cross-entropy needs a sigmoid head");
      break;
    case Loss::MeanSquaredError:
    case Loss::MeanAbsoluteError:
      // Any head: the loss takes the model's output as it is (a linear head is the usual one).
      ENGINE_CHECK(output_shape_.size() == 1,
                   "a regression loss needs F outputs per sample (Flatten first), got ",
                   keras_shape(output_shape_));
      break;
  }
  optimizer_ = std::move(optimizer);
  loss_ = loss;
  compiled_ = true;
}

}  // namespace engine::nn
