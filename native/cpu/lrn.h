// Local response normalization across channels (AlexNet's; PyTorch's
// LocalResponseNorm semantics), NCHW:
//   scale_c = k + alpha / size * sum_{j = c - size/2 .. c + (size-1)/2, 0 <= j < C} x_j^2
//   y_c     = x_c * scale_c^-beta
// Backward from the saved scale (and y):
//   dx_c = dy_c * scale_c^-beta
//          - 2 alpha beta / size * x_c * sum_{j = c - (size-1)/2 .. c + size/2} dy_j * y_j / scale_j
// Both window sums slide along the channels: O(1) per element, whatever size.
// (A block of positions holding an inf or NaN is redone with each window summed
// afresh, so such a value reaches only the windows that hold it.)
#pragma once
#include <cstdint>

#include "isa_dispatch.h"

namespace minifw {

struct LrnShape {
  int64_t N, C, HW;
  int64_t size;
  double alpha, beta, k;
  int64_t elems() const { return N * C * HW; }
};

template <typename T>
void lrn_forward(const LrnShape& s, const T* x, T* y, T* scale, int nthreads);

template <typename T>
void lrn_backward(const LrnShape& s, const T* dy, const T* x, const T* y, const T* scale, T* dx, int nthreads);

// Per-block kernels, built once per ISA from lrn_impl.h (isa_dispatch.h):
// B <= kLrnBlock consecutive positions of one image, each pointer at the
// block's first position in channel 0; scratch holds kLrnScratchBytes.
template <typename T>
struct LrnKernels {
  void (*forward_block)(const LrnShape& s, const T* x, T* y, T* scale, int64_t B, void* scratch);
  void (*backward_block)(const LrnShape& s, const T* dy, const T* x, const T* y, const T* scale, T* dx, int64_t B,
                         void* scratch);
};
constexpr int64_t kLrnBlock = 512;
constexpr int64_t kLrnScratchBytes = kLrnBlock * (2 * 8 + 8) + 64;

MINIFW_DECLARE_ISA_VARIANTS(LrnKernels<float>);
MINIFW_DECLARE_ISA_VARIANTS(LrnKernels<double>);

}  // namespace minifw
