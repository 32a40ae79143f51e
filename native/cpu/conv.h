// 2-D convolution, NCHW, cross-correlation as in every framework:
//   y[n, k, oh, ow] = sum_{c in group, r, s} w[k, c, r, s] *
//                     x[n, c, oh * sh - ph + r * dh, ow * sw - pw + s * dw]
// Each algorithm below is a separate implementation of the three directions
// (forward, backward-data, backward-filter). All of them are GEMMs in the end;
// they differ in how the GEMM's operands come to exist.
#pragma once
#include <cstdint>
#include <string>

#include "conv_shape.h"
#include "gemm.h"

namespace minifw {

// Workspace an algorithm needs: `explicit_bytes` is handed in by the caller;
// `pack_bytes` is the GEMM packing memory the library takes itself (per run,
// all threads together). Their sum is what a user is told.
struct ConvWorkspace {
  int64_t explicit_bytes;
  int64_t pack_bytes;
};
template <typename T>
ConvWorkspace conv_workspace(ConvAlgo algo, ConvDir dir, const ConvShape& s, int nthreads);

// The entry points. `workspace` must hold conv_workspace(...).explicit_bytes.
template <typename T>
void conv_forward(ConvAlgo algo, const ConvShape& s, const T* x, const T* w, const T* bias, T* y,
                  void* workspace, int nthreads);
template <typename T>
void conv_backward_data(ConvAlgo algo, const ConvShape& s, const T* dy, const T* w, T* dx,
                        void* workspace, int nthreads);
template <typename T>
void conv_backward_filter(ConvAlgo algo, const ConvShape& s, const T* x, const T* dy, T* dw,
                          void* workspace, int nthreads);

// ---- per-algorithm implementations (conv_im2col.cpp, conv_implicit.cpp,
// conv_winograd.cpp, conv_1x1.cpp, conv_direct.cpp, conv_depthwise.cpp) ----------------------------------------
template <typename T> ConvWorkspace im2col_workspace(ConvDir dir, const ConvShape& s, int nthreads);
template <typename T> void im2col_forward(const ConvShape& s, const T* x, const T* w, T* y, T* ws, int nthreads);
template <typename T> void im2col_backward_data(const ConvShape& s, const T* dy, const T* w, T* dx, T* ws, int nthreads);
template <typename T> void im2col_backward_filter(const ConvShape& s, const T* x, const T* dy, T* dw, T* ws, int nthreads);

template <typename T> ConvWorkspace implicit_workspace(ConvDir dir, const ConvShape& s, int nthreads);
template <typename T> void implicit_forward(const ConvShape& s, const T* x, const T* w, T* y, int nthreads);
template <typename T> void implicit_backward_data(const ConvShape& s, const T* dy, const T* w, T* dx, int nthreads);
template <typename T> void implicit_backward_filter(const ConvShape& s, const T* x, const T* dy, T* dw, int nthreads);

template <typename T> ConvWorkspace winograd_workspace(ConvDir dir, const ConvShape& s, int nthreads);
template <typename T> void winograd_forward(const ConvShape& s, const T* x, const T* w, T* y, T* ws, int nthreads);
template <typename T> void winograd_backward_data(const ConvShape& s, const T* dy, const T* w, T* dx, T* ws, int nthreads);
template <typename T> void winograd_backward_filter(const ConvShape& s, const T* x, const T* dy, T* dw, T* ws, int nthreads);

template <typename T> ConvWorkspace direct_workspace(ConvDir dir, const ConvShape& s, int nthreads);
template <typename T> void direct_forward(const ConvShape& s, const T* x, const T* w, const T* bias, T* y, T* ws, int nthreads);
template <typename T> void direct_backward_data(const ConvShape& s, const T* dy, const T* w, T* dx, T* ws, int nthreads);
template <typename T> void direct_backward_filter(const ConvShape& s, const T* x, const T* dy, T* dw, T* ws, int nthreads);

// depthwise (conv_depthwise.cpp): one input channel per group; no workspace
template <typename T>
void depthwise_forward(const ConvShape& s, const T* x, const T* w, const T* bias, T* y, int nthreads);
template <typename T>
void depthwise_backward_data(const ConvShape& s, const T* dy, const T* w, T* dx, int nthreads);
template <typename T>
void depthwise_backward_filter(const ConvShape& s, const T* x, const T* dy, T* dw, int nthreads);

template <typename T> ConvWorkspace gemm1x1_workspace(ConvDir dir, const ConvShape& s, int nthreads);
template <typename T> void gemm1x1_forward(const ConvShape& s, const T* x, const T* w, T* y, int nthreads);
template <typename T> void gemm1x1_backward_data(const ConvShape& s, const T* dy, const T* w, T* dx, int nthreads);
template <typename T> void gemm1x1_backward_filter(const ConvShape& s, const T* x, const T* dy, T* dw, int nthreads);

// ---- shared pieces ------------------------------------------------------------
// The lowered matrix of s.N images (conv_im2col.cpp): col[(c * R + r) * S + s][n * P + p].
template <typename T> void im2col_lower(const ConvShape& s, const T* x, T* col, int nthreads);

// An NCHW tensor seen as a matrix with channels [c0, c0 + rows) as rows and
// (image, pixel) as columns: element (ch, n * P + p) = base[n * image_stride + (c0 + ch) * P + p].
template <typename T>
struct ChannelMatrix {
  const T* base;
  int64_t P, image_stride, c0;
};
// As a GEMM operand whose outer dimension is the channel (A of dW = dY * X^T)...
template <typename T> PackSource<T> channel_rows_source(const ChannelMatrix<T>* m);
// ...or the (image, pixel) column (B of Y = W * X for 1x1 and of col = W^T * dY).
template <typename T> PackSource<T> channel_cols_source(const ChannelMatrix<T>* m);

// Output mapping for a GEMM whose rows are channels [c0, ...) of an NCHW tensor
// with `channels` channels of P pixels, and whose columns are (image, pixel).
template <typename T>
GemmOutput<T> nchw_output(T* base, int64_t channels, int64_t P, int64_t c0) {
  GemmOutput<T> o{base + c0 * P, P};
  o.cols_per_row = P;
  o.rows_per_image = 1;
  o.col_stride = 1;
  o.image_stride = channels * P;
  return o;
}

// Run fn(g, threads_for_g) for every group: groups in parallel with one thread
// each when there are enough of them, else one after another with all threads
// inside each GEMM.
template <typename F>
void for_each_group(int64_t groups, int nthreads, F&& fn) {
  if (nthreads > 1 && groups >= nthreads) {
#pragma omp parallel for num_threads(nthreads) schedule(dynamic, 1)
    for (int64_t g = 0; g < groups; ++g) fn(g, 1);
  } else {
    for (int64_t g = 0; g < groups; ++g) fn(g, nthreads);
  }
}

// Threads that for_each_group runs GEMMs on at once (for workspace sizes).
inline int gemm_threads_in_flight(int64_t groups, int nthreads) {
  return nthreads > 1 && groups >= nthreads ? nthreads : (nthreads < 1 ? 1 : nthreads);
}

// A GEMM kernel with cache blocks shrunk so the packing buffers stay a small
// fraction of what lowering would take (used by implicit GEMM and 1x1), for a
// product with M rows.
template <typename T>
GemmKernel<T> lean_gemm_kernel(int64_t M);

}  // namespace minifw
