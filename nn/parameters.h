// A model's parameters in one contiguous buffer, gradients in a second of the same layout.
// Each layer holds views into them, so one optimizer call updates every parameter, one
// fill zeroes every gradient, and one write saves the model.
#pragma once
#include <cmath>
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

// The first parameter, in forward order, whose part of `flat` (laid out like store.values:
// the values, the gradients or an optimizer's state) holds a NaN or an infinity; `bad` gets
// that number. nullptr when every number is finite.
inline const Parameter* first_non_finite(const ParameterStore& store, const std::vector<float>& flat,
                                         float* bad) {
  size_t i = 0;
  for (const Parameter& p : store.params) {
    for (const size_t end = i + static_cast<size_t>(p.value.numel()); i < end; ++i) {
      if (!std::isfinite(flat[i])) {
        *bad = flat[i];
        return &p;
      }
    }
  }
  return nullptr;
}

}  // namespace engine::nn
