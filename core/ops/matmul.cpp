// matmul: its dispatch point, its cost and its rules for backward, vjp and jvp (core/ops/matmul.h).
#include "core/ops/matmul.h"

#include "core/autograd.h"
#include "core/batched_rules.h"
#include "core/dispatch.h"
#include "core/op_checks.h"
#include "core/ops/elementwise.h"

namespace engine {
namespace {

// C = A' B' with A' = op(A), B' = op(B). The logical gradients are dA' = dC B'^T and
// dB' = A'^T dC; where an operand is stored transposed its gradient is the transpose of the
// logical one, which is again a single matmul with other transpose flags (no copies).
class MatmulNode final : public Node {
 public:
  MatmulNode(const Tensor& a, const Tensor& b, bool ta, bool tb)
      : Node({a, b}), transpose_a_(ta), transpose_b_(tb) {}
  const char* name() const override { return "matmul"; }

  std::vector<Tensor> backward(const Tensor& dc) override {
    const Tensor& a = inputs()[0];
    const Tensor& b = inputs()[1];
    Tensor da, db;
    if (needs_input_grad(0)) {
      // stored A (M,K): dA = dC B^T   (with op(B) = B or B^T)
      // stored A^T (K,M): dA = B dC^T (i.e. (dC B^T)^T)
      da = transpose_a_ ? matmul_raw(b, transpose_b_, dc, true, a.shape(), gradient_destination(0))
                        : matmul_raw(dc, false, b, !transpose_b_, a.shape(), gradient_destination(0));
    }
    if (needs_input_grad(1)) {
      // stored B (K,N): dB = A^T dC ; stored B^T (N,K): dB = dC^T A
      db = transpose_b_ ? matmul_raw(dc, true, a, transpose_a_, b.shape(), gradient_destination(1))
                        : matmul_raw(a, !transpose_a_, dc, false, b.shape(), gradient_destination(1));
    }
    return {da, db};
  }

  // K directions at once. The tangent or cotangent of a non-transposed left operand stacks
  // its K directions as rows, (K * M, K'): one GEMM for all of them, the seed MLP's case.
  // The other cases (a constant mixing the rows of x, transposed operands) take one GEMM per
  // direction.
  std::vector<Tensor> vjp(int64_t K, const Tensor& dc, const std::vector<bool>& wanted) override {
    const Tensor& a = inputs()[0];
    const Tensor& b = inputs()[1];
    const Shape& c_shape = output_shape();
    Tensor da, db;
    if (wanted[0]) {
      da = Tensor::empty(stacked_shape(K, a.shape()), DType::F32, dc.device());
      if (!transpose_a_) {  // dA_k = dC_k op(B)^T
        Tensor rows = da.view({K * a.dim(0), a.dim(1)});
        raw::matmul(dc.view({K * c_shape[0], c_shape[1]}), false, b, !transpose_b_, rows, 1.0f, 0.0f);
      } else {  // stored A^T: dA_k = op(B) dC_k^T
        for (int64_t k = 0; k < K; ++k) {
          Tensor out = direction(da, k, a.shape());
          raw::matmul(b, transpose_b_, direction(dc, k, c_shape), true, out, 1.0f, 0.0f);
        }
      }
    }
    if (wanted[1]) {
      db = Tensor::empty(stacked_shape(K, b.shape()), DType::F32, dc.device());
      for (int64_t k = 0; k < K; ++k) {
        Tensor out = direction(db, k, b.shape());
        const Tensor dc_k = direction(dc, k, c_shape);
        if (transpose_b_) {  // stored B^T: dB_k = dC_k^T op(A)
          raw::matmul(dc_k, true, a, transpose_a_, out, 1.0f, 0.0f);
        } else {  // dB_k = op(A)^T dC_k
          raw::matmul(a, !transpose_a_, dc_k, false, out, 1.0f, 0.0f);
        }
      }
    }
    return {da, db};
  }

  bool has_jvp() const override { return true; }
  // d(op(A) op(B)) = op(dA) op(B) + op(A) op(dB).
  Tensor jvp(int64_t K, const std::vector<Tensor>& t) override {
    const Tensor& a = inputs()[0];
    const Tensor& b = inputs()[1];
    const Shape& c_shape = output_shape();
    Tensor dc = Tensor::empty(stacked_shape(K, c_shape), DType::F32, a.device());
    float beta = 0.0f;  // the second term adds to the first
    if (t[0].defined()) {
      if (!transpose_a_) {
        Tensor rows = dc.view({K * c_shape[0], c_shape[1]});
        raw::matmul(t[0].view({K * a.dim(0), a.dim(1)}), false, b, transpose_b_, rows, 1.0f, 0.0f);
      } else {
        for (int64_t k = 0; k < K; ++k) {
          Tensor out = direction(dc, k, c_shape);
          raw::matmul(direction(t[0], k, a.shape()), true, b, transpose_b_, out, 1.0f, 0.0f);
        }
      }
      beta = 1.0f;
    }
    if (t[1].defined()) {
      for (int64_t k = 0; k < K; ++k) {
        Tensor out = direction(dc, k, c_shape);
        raw::matmul(a, transpose_a_, direction(t[1], k, b.shape()), transpose_b_, out, 1.0f, beta);
      }
    } else if (beta == 0.0f) {
      raw::fill(dc, 0.0f);  // neither operand moves
    }
    return dc;
  }

 private:
  // Into `out` when given (a parameter's gradient buffer), else into a new tensor.
  static Tensor matmul_raw(const Tensor& x, bool tx, const Tensor& y, bool ty, const Shape& shape,
                           Tensor out) {
    if (!out.defined()) out = Tensor::empty(shape, DType::F32, x.device());
    raw::matmul(x, tx, y, ty, out, 1.0f, 0.0f);
    return out;
  }
  bool transpose_a_, transpose_b_;
};

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b) {
  detail::check_defined_float("matmul", a, "a");
  detail::check_defined_float("matmul", b, "b");
  detail::check_same_device("matmul", a, b);
  detail::check_ndim("matmul", a, 2, "a");
  detail::check_ndim("matmul", b, 2, "b");
  const int64_t m = transpose_a ? a.dim(1) : a.dim(0);
  const int64_t k = transpose_a ? a.dim(0) : a.dim(1);
  const int64_t k2 = transpose_b ? b.dim(1) : b.dim(0);
  const int64_t n = transpose_b ? b.dim(0) : b.dim(1);
  ENGINE_CHECK(k == k2, "matmul: inner dimensions differ: ", to_string(a.shape()),
               transpose_a ? "^T" : "", " @ ", to_string(b.shape()), transpose_b ? "^T" : "");
  Tensor c = Tensor::empty({m, n}, DType::F32, a.device());
  raw::matmul(a, transpose_a, b, transpose_b, c, 1.0f, 0.0f);
  return record(c, std::make_shared<MatmulNode>(a, b, transpose_a, transpose_b));
}

bool gpu_matmul_small_output(int64_t M, int64_t N, int64_t K, int64_t sms) {
  if (M < GPU_MATMUL_LARGE || N < GPU_MATMUL_LARGE) return true;
  const int64_t tile = GPU_MATMUL_LARGE_TILE;
  const int64_t tiles = ((M + tile - 1) / tile) * ((N + tile - 1) / tile);
  return tiles < sms && K < 2 * GPU_MATMUL_LARGE_MIN_SLICE;
}

bool gpu_matmul_stays_fp32(int64_t M, int64_t N, int64_t K, int64_t sms) {
  return gpu_matmul_small_output(M, N, K, sms) && K < GPU_MATMUL_SMALL_TF32_MIN_K &&
         M * N * K < GPU_MATMUL_SMALL_TF32_MIN_FMA;
}

bool gpu_matmul_few_rows_tf32(int64_t M, int64_t N, int64_t K, int64_t sms) {
  return M >= 64 && M < GPU_MATMUL_LARGE && (N >= 8 * GPU_MATMUL_LARGE || K >= GPU_MATMUL_SMALL_TF32_MIN_K) &&
         !gpu_matmul_stays_fp32(M, N, K, sms);
}

bool gpu_matmul_dense_backward_as_conv(int64_t M, int64_t N, int64_t K, bool transpose_a, bool transpose_b,
                                       int64_t sms) {
  const auto batch_and_wide = [](int64_t batch, int64_t inputs) {
    return batch >= 64 && batch < GPU_MATMUL_LARGE && inputs >= 8 * GPU_MATMUL_LARGE;
  };
  if (gpu_matmul_stays_fp32(M, N, K, sms)) return false;
  if (!transpose_a && transpose_b) return batch_and_wide(M, N);  // dX = dY W^T
  if (transpose_a && !transpose_b) return batch_and_wide(K, M);  // dW = X^T dY
  return false;
}

namespace raw {

void matmul(const Tensor& a, bool transpose_a, const Tensor& b, bool transpose_b, Tensor& c,
            float alpha, float beta) {
  const auto describe = [&] {
    const int64_t m = c.dim(0), n = c.dim(1), k = transpose_a ? a.dim(0) : a.dim(1);
    return OpCall{"matmul",
                  dims(a) + (transpose_a ? "^T" : "") + " @ " + dims(b) + (transpose_b ? "^T" : ""),
                  matmul_cost(m, n, k)};
  };
  dispatch(c, describe,
           [&] { cpu::matmul(a, transpose_a, b, transpose_b, c, alpha, beta); },
           [&] { ENGINE_CUDA(cuda::matmul(a, transpose_a, b, transpose_b, c, alpha, beta)); },
           [&] { ENGINE_CUDA(vendor::matmul(a, transpose_a, b, transpose_b, c, alpha, beta)); });
}

}  // namespace raw
}  // namespace engine
