// A model's parameters in one contiguous buffer, gradients in a second of the same layout.
// Each layer holds views into them, so one optimizer call updates every parameter, one
// fill zeroes every gradient, and one write saves the model (DESIGN.md section 3).
#pragma once
#include <string>
#include <vector>

#include "core/tensor.h"

namespace engine::nn {

struct Parameter {
  std::string name;  // "dense/kernel"
  Tensor value;      // view into ParameterStore::values, requires_grad, grad = view below
  Tensor grad;       // view into ParameterStore::grads
};

struct ParameterStore {
  Tensor values;  // (count,) on the model's device
  Tensor grads;   // (count,)
  std::vector<Parameter> params;
  int64_t count() const { return values.defined() ? values.numel() : 0; }
};

}  // namespace engine::nn
