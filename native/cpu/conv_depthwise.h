// The depthwise convolution's per-plane kernels (conv_depthwise.cpp holds the algorithm),
// compiled once per ISA from conv_depthwise_impl.h and chosen with select_isa_variant.
#pragma once
#include <cstdint>

#include "isa_dispatch.h"

namespace minifw {

// One plane's geometry: input H x W, output Ho x Wo, an R x S filter at stride (sh, sw),
// padding (ph, pw) and dilation (dh, dw).
struct DepthwisePlane {
  int64_t H, W, Ho, Wo, R, S, sh, sw, ph, pw, dh, dw;
};

// Planes whose rows have fewer outputs than this, at stride 1, are computed in a padded
// copy in scratch memory (conv_depthwise_impl.h: depthwise_scratch_elements per thread).
constexpr int64_t kDepthwisePaddedBelow = 64;

template <typename T>
struct DepthwiseKernels {
  // y = bias + the R x S filter w slid over the plane x (one output plane)
  void (*forward)(const DepthwisePlane& g, const T* x, const T* w, T bias, T* y, T* scratch);
  // dx = the sum over `m` output planes dy (P = Ho * Wo apart) of each plane scattered back
  // through its filter (w: m filters of R x S, one after another)
  void (*backward_data)(const DepthwisePlane& g, const T* dy, int64_t m, const T* w, T* dx, T* scratch);
  // dw[r * S + s] += the sum over the plane of dy times x at tap (r, s): one image's part
  void (*backward_filter)(const DepthwisePlane& g, const T* x, const T* dy, T* dw, T* scratch);
};

MINIFW_DECLARE_ISA_VARIANTS(DepthwiseKernels<float>);
MINIFW_DECLARE_ISA_VARIANTS(DepthwiseKernels<double>);

}  // namespace minifw
