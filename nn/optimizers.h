// Optimizers over a model's flat parameter buffer: one op call updates everything.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "core/device_services.h"
#include "core/ops.h"
#include "core/tensor.h"
#include "nn/parameters.h"

namespace engine::nn {

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  virtual std::string name() const = 0;
  // Applies one update from store.grads to store.values. `step` is the number of updates
  // already applied, an I32 scalar on the parameters' device (the caller increments it).
  virtual void step(ParameterStore& store, const Tensor& step) = 0;
  // Replaces the learning rate the optimizer was made with (--learning-rate); must be positive.
  // Between two steps too (a schedule, a callback): the next step uses it, a step recorded as a
  // CUDA graph included (fit records it again, nn/graphed_step.h).
  virtual void set_learning_rate(float learning_rate) = 0;
  virtual float learning_rate() const = 0;
  // What a checkpoint saves to go on as if never stopped: each state buffer (laid out like
  // store.values) by name. Buffers no step has made yet are made now, zeroed, as the first
  // step would; the tensors share storage with the optimizer's, so a copy into them restores.
  virtual std::vector<std::pair<std::string, Tensor>> state(const ParameterStore& store) = 0;
};

// Plain SGD, or with momentum (Keras: v = momentum v - lr g; p += v). Keras defaults.
class SGD final : public Optimizer {
 public:
  explicit SGD(float learning_rate = 0.01f, float momentum = 0.0f);
  std::string name() const override { return "SGD"; }
  void step(ParameterStore& store, const Tensor& step) override;
  void set_learning_rate(float learning_rate) override;
  float learning_rate() const override { return learning_rate_; }
  std::vector<std::pair<std::string, Tensor>> state(const ParameterStore& store) override;

 private:
  float learning_rate_, momentum_;
  Tensor velocity_;
};

// Adam with Keras' defaults and update rule (epsilon added to sqrt(v), as Keras 2 does).
class Adam final : public Optimizer {
 public:
  explicit Adam(float learning_rate = 1e-3f, float beta1 = 0.9f, float beta2 = 0.999f,
                float epsilon = 1e-7f);
  std::string name() const override { return "Adam"; }
  void step(ParameterStore& store, const Tensor& step) override;
  void set_learning_rate(float learning_rate) override;
  float learning_rate() const override { return config_.learning_rate; }
  std::vector<std::pair<std::string, Tensor>> state(const ParameterStore& store) override;
  // Its settings, for the fused MLP kernel (nn/fused_mlp.h), which runs Adam itself.
  const AdamConfig& config() const { return config_; }

 private:
  AdamConfig config_;
  Tensor m_, v_;
};

// RMSprop with Keras' defaults (no momentum, not centered): s = rho s + (1 - rho) g^2;
// p -= lr g / (sqrt(s) + eps).
class RMSprop final : public Optimizer {
 public:
  explicit RMSprop(float learning_rate = 1e-3f, float rho = 0.9f, float epsilon = 1e-7f);
  std::string name() const override { return "RMSprop"; }
  void step(ParameterStore& store, const Tensor& step) override;
  void set_learning_rate(float learning_rate) override;
  float learning_rate() const override { return learning_rate_; }
  std::vector<std::pair<std::string, Tensor>> state(const ParameterStore& store) override;

 private:
  float learning_rate_, rho_, epsilon_;
  Tensor mean_square_;
};

// Adadelta with Keras' defaults (learning rate 1.0 as in Keras 2.0-2.2, where seed 004 ran):
// s = rho s + (1 - rho) g^2; d = sqrt(u + eps) / sqrt(s + eps) g; u = rho u + (1 - rho) d^2;
// p -= lr d.
class Adadelta final : public Optimizer {
 public:
  explicit Adadelta(float learning_rate = 1.0f, float rho = 0.95f, float epsilon = 1e-7f);
  std::string name() const override { return "Adadelta"; }
  void step(ParameterStore& store, const Tensor& step) override;
  void set_learning_rate(float learning_rate) override;
  float learning_rate() const override { return learning_rate_; }
  std::vector<std::pair<std::string, Tensor>> state(const ParameterStore& store) override;

 private:
  float learning_rate_, rho_, epsilon_;
  Tensor mean_square_, mean_square_delta_;
};

}  // namespace engine::nn
