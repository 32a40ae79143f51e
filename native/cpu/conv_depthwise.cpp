// The depthwise algorithm: a convolution with one input channel per group (groups = C),
// each output channel k = c * m + j (m = K / C, the channel multiplier) filtering input
// channel c alone. There is no GEMM to feed, so the planes are computed as they are,
// with no workspace: the forward and backward-data one plane per task, the
// backward-filter one output channel per task summing over the images in order. The
// per-plane kernels are conv_depthwise_impl.h's, one build per ISA.
#include "conv_depthwise.h"

#include <vector>

#include "conv.h"
#include "conv_depthwise_impl.h"
#include "split_work.h"

namespace minifw {

MINIFW_ISA_VARIANT(DepthwiseKernels<float>, generic, make_depthwise_kernels<float>())
MINIFW_ISA_VARIANT(DepthwiseKernels<double>, generic, make_depthwise_kernels<double>())

namespace {
DepthwisePlane depthwise_plane(const ConvShape& s) {
  return {s.H, s.W, s.Ho, s.Wo, s.R, s.S, s.sh, s.sw, s.ph, s.pw, s.dh, s.dw};
}

}  // namespace

template <typename T>
void depthwise_forward(const ConvShape& s, const T* x, const T* w, const T* bias, T* y, int nthreads) {
  const DepthwiseKernels<T>& ks = select_isa_variant<DepthwiseKernels<T>>();
  const DepthwisePlane g = depthwise_plane(s);
  const int64_t m = s.Kg(), RS = s.R * s.S, P = s.P(), HW = s.H * s.W;
  for_each_range(s.N * s.K, nthreads, grain_for(P * RS), [&](int64_t b, int64_t e) {
    std::vector<T> scratch(static_cast<size_t>(depthwise_scratch_elements(g)));
    for (int64_t q = b; q < e; ++q) {
      const int64_t n = q / s.K, k = q % s.K;
      ks.forward(g, x + (n * s.C + k / m) * HW, w + k * RS, bias ? bias[k] : T(0), y + q * P, scratch.data());
    }
  });
}

template <typename T>
void depthwise_backward_data(const ConvShape& s, const T* dy, const T* w, T* dx, int nthreads) {
  const DepthwiseKernels<T>& ks = select_isa_variant<DepthwiseKernels<T>>();
  const DepthwisePlane g = depthwise_plane(s);
  const int64_t m = s.Kg(), RS = s.R * s.S, P = s.P(), HW = s.H * s.W;
  for_each_range(s.N * s.C, nthreads, grain_for(m * P * RS + HW), [&](int64_t b, int64_t e) {
    std::vector<T> scratch(static_cast<size_t>(depthwise_scratch_elements(g)));
    for (int64_t q = b; q < e; ++q) {  // q = n * C + c; its output channels c * m .. c * m + m - 1
      const int64_t n = q / s.C, c = q % s.C;
      ks.backward_data(g, dy + (n * s.K + c * m) * P, m, w + c * m * RS, dx + q * HW, scratch.data());
    }
  });
}

template <typename T>
void depthwise_backward_filter(const ConvShape& s, const T* x, const T* dy, T* dw, int nthreads) {
  const DepthwiseKernels<T>& ks = select_isa_variant<DepthwiseKernels<T>>();
  const DepthwisePlane g = depthwise_plane(s);
  const int64_t m = s.Kg(), RS = s.R * s.S, P = s.P(), HW = s.H * s.W;
  for_each_range(s.K, nthreads, grain_for(s.N * P * RS), [&](int64_t b, int64_t e) {
    std::vector<T> scratch(static_cast<size_t>(depthwise_scratch_elements(g)));
    for (int64_t k = b; k < e; ++k) {  // the images' parts added in order, on one thread
      T* out = dw + k * RS;
      for (int64_t i = 0; i < RS; ++i) out[i] = T(0);
      for (int64_t n = 0; n < s.N; ++n)
        ks.backward_filter(g, x + (n * s.C + k / m) * HW, dy + (n * s.K + k) * P, out, scratch.data());
    }
  });
}

#define MINIFW_INSTANTIATE_DEPTHWISE(T)                                                          \
  template void depthwise_forward<T>(const ConvShape&, const T*, const T*, const T*, T*, int); \
  template void depthwise_backward_data<T>(const ConvShape&, const T*, const T*, T*, int);     \
  template void depthwise_backward_filter<T>(const ConvShape&, const T*, const T*, T*, int);
MINIFW_INSTANTIATE_DEPTHWISE(float)
MINIFW_INSTANTIATE_DEPTHWISE(double)
}  // namespace minifw
