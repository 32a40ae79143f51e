// 2-D max and average pooling, NCHW, forward and backward.
//
// Output size follows PyTorch: floor((H + 2p - d (k - 1) - 1) / s) + 1, or with
// ceil_mode the ceiling, less one when the last window would start inside the
// right padding. A window's k taps lie d (the dilation) apart; only max pooling
// is dilated (d = 1 for average pooling). A window is clipped to the padded
// input; max pooling ignores the padding, average pooling divides by the
// clipped window's area (count_include_pad) or by the number of input elements
// in it.
#pragma once
#include <cstdint>

#include "isa_dispatch.h"

namespace minifw {

struct PoolShape {
  int64_t N, C, H, W;
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
  int64_t Ho, Wo;
  int64_t planes() const { return N * C; }
  int64_t x_size() const { return N * C * H * W; }
  int64_t y_size() const { return N * C * Ho * Wo; }
};

// Computes Ho, Wo; throws std::invalid_argument on anything inconsistent
// (padding > kernel / 2, an empty output, sizes < 1, a dilated window that
// holds no input element).
PoolShape make_pool_shape(int64_t N, int64_t C, int64_t H, int64_t W, int64_t kh, int64_t kw, int64_t sh,
                          int64_t sw, int64_t ph, int64_t pw, int64_t dh, int64_t dw, bool ceil_mode);

enum class PoolMode { max, avg_include_pad, avg_exclude_pad };

// indices (max only, may be null): flat index h * W + w of each window's first
// maximum in row-major order (a NaN counts as the maximum).
template <typename T>
void pool_forward(const PoolShape& s, PoolMode mode, const T* x, T* y, int64_t* indices, int nthreads);

// dx = 0 everywhere, then: max routes dy to indices[...] (which must lie in
// [0, H * W): others are skipped and reported); avg spreads dy / divisor over
// the window. Returns the flat position in dy of the first bad index, or -1.
template <typename T>
int64_t pool_backward(const PoolShape& s, PoolMode mode, const T* dy, const int64_t* indices, T* dx,
                      int nthreads);

// Per-plane kernels, built once per ISA from pooling_impl.h (isa_dispatch.h).
// Each handles one (n, c) plane; scratch holds at least pool_scratch_bytes(s)
// bytes.
template <typename T>
struct PoolKernels {
  void (*max_plane)(const PoolShape& s, const T* x, T* y, int64_t* indices, void* scratch);
  void (*avg_plane)(const PoolShape& s, bool include_pad, const T* x, T* y, void* scratch);
};
int64_t pool_scratch_bytes(const PoolShape& s);

MINIFW_DECLARE_ISA_VARIANTS(PoolKernels<float>);
MINIFW_DECLARE_ISA_VARIANTS(PoolKernels<double>);

}  // namespace minifw
