// matmul on the CPU: one cblas_sgemm call (row-major). OpenBLAS picks its own blocking and
// threads; a 32x784x128 forward is 6.4 MFLOP, tens of microseconds on one core.
#include <cblas.h>

#include "cpu/cpu_backend.h"

namespace engine::cpu {

void CpuBackend::matmul(const Tensor& a, bool transpose_a, const Tensor& b, bool transpose_b,
                        Tensor& c, float alpha, float beta) {
  const int64_t m = c.dim(0), n = c.dim(1);
  const int64_t k = transpose_a ? a.dim(0) : a.dim(1);
  if (m == 0 || n == 0) return;
  if (k == 0) {  // an empty sum: C = beta * C (BLAS may reject zero leading dimensions)
    if (beta == 0.0f) {
      fill(c, 0.0f);
    } else {
      axpby(beta, c, 0.0f, c);
    }
    return;
  }
  cblas_sgemm(CblasRowMajor, transpose_a ? CblasTrans : CblasNoTrans,
              transpose_b ? CblasTrans : CblasNoTrans, static_cast<blasint>(m),
              static_cast<blasint>(n), static_cast<blasint>(k), alpha, a.data<float>(),
              static_cast<blasint>(a.dim(1)), b.data<float>(), static_cast<blasint>(b.dim(1)),
              beta, c.data<float>(), static_cast<blasint>(n));
}

}  // namespace engine::cpu
