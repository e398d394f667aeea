// The Layer interface: Keras-like layers that are built once for an input shape, declare the
// parameters they need, and receive views into the model's flat parameter buffer.
#pragma once
#include <string>
#include <vector>

#include "core/device_services.h"
#include "core/ops.h"
#include "core/rng.h"
#include "core/tensor.h"

namespace engine::nn {

enum class Init { GlorotUniform, Zeros };

// One parameter a layer asks for; fan_in/fan_out feed the Glorot limit.
struct ParamSpec {
  std::string name;  // "kernel", "bias"
  Shape shape;
  Init init;
  int64_t fan_in = 0;
  int64_t fan_out = 0;
};

// One number of a layer's configuration, named as Keras' get_config() names it: ("units", 128).
// Enumerations (activation, padding) are stored as the codes docs/model_format.md lists.
struct LayerSetting {
  std::string name;
  double value;
};

struct ForwardContext {
  bool training = false;
  // Dropout while training: call k of a forward pass draws from seed derive_seed(dropout_seed,
  // k) at the step held in `step` (an I32 scalar on the model's device), so each layer has
  // its own stream and each step a fresh mask, without the host handing in new numbers.
  uint64_t dropout_seed = 0;
  Tensor step;
  int dropout_calls = 0;
  // Where this batch's rows start in the step's global batch: a data-parallel rank's offset
  // (core/data_parallel.h), so its dropout masks are those one device would draw. 0 otherwise.
  int64_t first_row = 0;
  bool skip_activation = false;  // return pre-activation outputs (logits); see Sequential
};

class Layer {
 public:
  virtual ~Layer() = default;
  virtual std::string type() const = 0;  // "Dense", as in Keras' summary
  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  // Called once with the per-sample input shape (no batch dimension); returns the
  // per-sample output shape and fixes the parameter shapes.
  virtual Shape build(const Shape& input_shape) = 0;
  virtual std::vector<ParamSpec> param_specs() const { return {}; }
  // Views into the model's parameter buffer, in the order of param_specs().
  virtual void bind_parameters(const std::vector<Tensor>& params) { (void)params; }
  virtual Activation activation() const { return Activation::None; }
  // What, with type(), makes this layer again (layer_from_config in nn/layers.h): the settings
  // a model file stores (nn/model_file.h). A layer without settings, such as Flatten, has none.
  virtual std::vector<LayerSetting> config() const { return {}; }
  virtual Tensor forward(const Tensor& x, ForwardContext& ctx) = 0;
  // A convolution's filters, which the model's forward pass prepares for all its layers at
  // once (PreparedConvFilters, core/ops/conv2d.h); undefined for other layers.
  virtual Tensor conv_filters() const { return Tensor(); }

 private:
  std::string name_;
};

}  // namespace engine::nn
