// The optimizers' updates and the step counter: dispatch points and costs
// (core/ops/optimizers.h). nn/optimizers.cpp holds the optimizers themselves.
#include "core/ops/optimizers.h"


#include "core/dispatch.h"

namespace engine {

namespace raw {

void sgd_update(Tensor& param, const Tensor& grad, Tensor& velocity, float lr, float momentum) {
  dispatch(param, [&] { return OpCall{"sgd_update", dims(param), elementwise_cost(param.numel(), 4.0, 5)}; },
           [&] { cpu::sgd_update(param, grad, velocity, lr, momentum); },
           [&] { ENGINE_CUDA(cuda::sgd_update(param, grad, velocity, lr, momentum)); });
}

void adam_update(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const AdamConfig& config,
                 const Tensor& step) {
  // Read p, g, m, v; write p, m, v: 7 arrays; ~12 FLOPs with a square root.
  dispatch(param, [&] { return OpCall{"adam_update", dims(param), elementwise_cost(param.numel(), 12.0, 7)}; },
           [&] { cpu::adam_update(param, grad, m, v, config, step); },
           [&] { ENGINE_CUDA(cuda::adam_update(param, grad, m, v, config, step)); });
}

void rmsprop_update(Tensor& param, const Tensor& grad, Tensor& mean_square, float lr, float rho,
                    float epsilon) {
  dispatch(param, [&] { return OpCall{"rmsprop_update", dims(param), elementwise_cost(param.numel(), 8.0, 5)}; },
           [&] { cpu::rmsprop_update(param, grad, mean_square, lr, rho, epsilon); },
           [&] { ENGINE_CUDA(cuda::rmsprop_update(param, grad, mean_square, lr, rho, epsilon)); });
}

void adadelta_update(Tensor& param, const Tensor& grad, Tensor& mean_square,
                     Tensor& mean_square_delta, float lr, float rho, float epsilon) {
  dispatch(param,
           [&] { return OpCall{"adadelta_update", dims(param), elementwise_cost(param.numel(), 14.0, 7)}; },
           [&] { cpu::adadelta_update(param, grad, mean_square, mean_square_delta, lr, rho, epsilon); },
           [&] {
             ENGINE_CUDA(cuda::adadelta_update(param, grad, mean_square, mean_square_delta, lr, rho,
                                               epsilon));
           });
}

void increment(Tensor& counter) {
  dispatch(counter, [&] { return OpCall{"increment", "scalar", {1.0, 8.0}}; },
           [&] { cpu::increment(counter); }, [&] { ENGINE_CUDA(cuda::increment(counter)); });
}

}  // namespace raw
}  // namespace engine
