#include "core/conv_geometry.h"

#include "core/error.h"

namespace engine {

const char* to_string(Padding padding) { return padding == Padding::Same ? "same" : "valid"; }

namespace {

// Output extent and leading padding of one spatial axis (see the header for the rule).
void axis(int64_t in, int64_t k, int64_t stride, Padding padding, const char* what,
          int64_t& out, int64_t& pad_before) {
  ENGINE_CHECK(stride >= 1, what, ": stride ", stride, " must be at least 1");
  ENGINE_CHECK(k >= 1, what, ": window ", k, " must be at least 1");
  if (padding == Padding::Valid) {
    ENGINE_CHECK(in >= k, what, ": a window of ", k, " does not fit in ", in,
                 " with padding 'valid'");
    out = (in - k) / stride + 1;
    pad_before = 0;
  } else {
    out = (in + stride - 1) / stride;
    const int64_t total = (out - 1) * stride + k - in;
    pad_before = total > 0 ? total / 2 : 0;
  }
}

Conv2dGeometry window(const Shape& x, int64_t kh, int64_t kw, int64_t out_c, int64_t sh,
                      int64_t sw, Padding padding, const char* op) {
  ENGINE_CHECK(x.size() == 4, op, ": input must be (batch, height, width, channels), got ",
               to_string(x));
  Conv2dGeometry g;
  g.batch = x[0];
  g.in_h = x[1];
  g.in_w = x[2];
  g.in_c = x[3];
  g.kernel_h = kh;
  g.kernel_w = kw;
  g.out_c = out_c;
  g.stride_h = sh;
  g.stride_w = sw;
  axis(g.in_h, kh, sh, padding, op, g.out_h, g.pad_top);
  axis(g.in_w, kw, sw, padding, op, g.out_w, g.pad_left);
  return g;
}

}  // namespace

Conv2dGeometry conv2d_geometry(const Shape& x, const Shape& w, int64_t stride_h, int64_t stride_w,
                               Padding padding) {
  ENGINE_CHECK(x.size() == 4, "conv2d: input must be (batch, height, width, channels), got ",
               to_string(x));
  ENGINE_CHECK(w.size() == 4, "conv2d: filters must be (kernel_h, kernel_w, in_c, out_c), got ",
               to_string(w));
  ENGINE_CHECK(x[3] == w[2], "conv2d: input ", to_string(x), " has ", x[3],
               " channels but the filters ", to_string(w), " expect ", w[2]);
  return window(x, w[0], w[1], w[3], stride_h, stride_w, padding, "conv2d");
}

Conv2dGeometry pool2d_geometry(const Shape& x, int64_t pool_h, int64_t pool_w, int64_t stride_h,
                               int64_t stride_w, Padding padding) {
  return window(x, pool_h, pool_w, x.size() == 4 ? x[3] : 0, stride_h, stride_w, padding,
                "max_pool2d");
}

}  // namespace engine
