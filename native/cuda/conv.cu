// 2-D convolution on the GPU, NCHW, six algorithms:
// - implicit_gemm: the convolution as one GEMM per group whose lowered operand
//   (im2col's matrix) is never stored: tiled_gemm.cuh's tile loader gathers its
//   elements from the image (forward, backward-filter) or from dy (backward-data,
//   where each dx element sums the dy positions its pixel contributed to) while
//   filling shared memory. No workspace. This is the cuDNN paper's method.
// - im2col_gemm: Caffe's way, image by image: an im2col kernel writes the lowered
//   matrix of one image into the workspace, then one GEMM per group; backward-data
//   multiplies into the workspace and a col2im kernel gathers it into dx.
// - gemm_1x1: a 1x1, stride-1, unpadded convolution is a GEMM on the image as it is.
// - direct (stride 1): the source copied once into a padded layout where every tap of a
//   channel is the same array shifted; tiled_gemm's B tile is loaded from those shifted
//   views, no bounds test per element.
// - winograd: F(4x4, 3x3) as on the CPU: the transforms as kernels, the 36 products as
//   batched tiled GEMMs.
// - depthwise (one input channel per group): no GEMM to feed; one thread per output
//   element (forward) or input element (backward-data, gathering the taps that read it
//   from each of the channel's m output channels), and one block per weight for
//   backward-filter, its threads' partial sums added in a fixed tree (a thread per weight
//   where the batch's output positions are at most 256).
// conv_im2col and conv_col2im launch im2col_gemm's lowering kernels alone, for one
// image: the caffe engine lowers with them and multiplies with the array library's
// GEMM (cuBLAS through CuPy), as Caffe does on a GPU.
// Every output element is written by one thread with a fixed summation order:
// results are deterministic, with no atomics. With
// minifw.backends.cudnn.allow_tf32 (math_mode.h), float32 convolutions of every
// algorithm run their GEMMs on TF32 tensor cores (tiled_gemm_tf32).
#include <stdexcept>

#include "conv.h"
#include "gemm.h"
#include "math_mode.h"
#include "tiled_gemm.cuh"

namespace minifw {
namespace MINIFW_CUDA_NS {
namespace {

// ConvShape's fields and the sizes derived from them, as plain data a kernel can read.
struct Geometry {
  int64_t N, C, H, W, K, R, S, sh, sw, ph, pw, dh, dw, Ho, Wo;
  int64_t Cg, Kg, P, RS, CgRS, HW;
};
Geometry geometry(const ConvShape& s) {
  return {s.N, s.C, s.H, s.W, s.K, s.R, s.S, s.sh, s.sw, s.ph, s.pw, s.dh, s.dw, s.Ho, s.Wo,
          s.Cg(), s.Kg(), s.P(), s.R * s.S, s.Cg() * s.R * s.S, s.H * s.W};
}

// Element (crs, p) of image n's lowered matrix for group g: x at the input pixel
// that filter tap (r, s) of input channel c meets at output position p, or 0 in
// the padding.
template <typename T>
__device__ __forceinline__ T lowered(const Geometry& s, const T* x, int64_t n, int64_t g, int64_t crs, int64_t p) {
  const int64_t c = crs / s.RS, rs = crs % s.RS, r = rs / s.S, q = rs % s.S;
  const int64_t ih = (p / s.Wo) * s.sh - s.ph + r * s.dh, iw = (p % s.Wo) * s.sw - s.pw + q * s.dw;
  if (ih < 0 || ih >= s.H || iw < 0 || iw >= s.W) return T(0);
  return x[((n * s.C + g * s.Cg + c) * s.H + ih) * s.W + iw];
}

// Sum over the taps (r, s) whose output position lands on input pixel (h, w) of
// channel c: value(k_tap = c * RS + rs, output position). Backward-data's gather.
template <typename T, typename F>
__device__ __forceinline__ T gather_taps(const Geometry& s, int64_t h, int64_t w, F value) {
  T sum = 0;
  for (int64_t r = 0; r < s.R; ++r) {
    const int64_t th = h + s.ph - r * s.dh;
    if (th < 0 || th % s.sh) continue;
    const int64_t oh = th / s.sh;
    if (oh >= s.Ho) continue;
    for (int64_t q = 0; q < s.S; ++q) {
      const int64_t tw = w + s.pw - q * s.dw;
      if (tw < 0 || tw % s.sw) continue;
      const int64_t ow = tw / s.sw;
      if (ow < s.Wo) sum += value(r * s.S + q, oh * s.Wo + ow);
    }
  }
  return sum;
}

// ---- implicit GEMM: the operands of tiled_gemm ----------------------------------
// Forward, per group: y[n, k, p] = sum_crs w[k, crs] * lowered(crs, (n, p)) + bias[k];
// rows k, columns (n, p), depth crs.
template <typename T>
struct ImplicitForward {
  Geometry s;
  const T *x, *w, *bias;
  T* y;
  __device__ int64_t rows() const { return s.Kg; }
  __device__ int64_t cols() const { return s.N * s.P; }
  __device__ int64_t depth() const { return s.CgRS; }
  __device__ bool a_depth_fastest() const { return true; }
  __device__ bool b_cols_fastest() const { return true; }
  __device__ T load_a(int64_t g, int64_t k, int64_t crs) const { return w[(g * s.Kg + k) * s.CgRS + crs]; }
  __device__ T load_b(int64_t g, int64_t crs, int64_t j) const { return lowered(s, x, j / s.P, g, crs, j % s.P); }
  __device__ void store(int64_t g, int64_t k, int64_t j, T acc) const {
    const int64_t channel = g * s.Kg + k;
    y[((j / s.P) * s.K + channel) * s.P + j % s.P] = bias ? acc + bias[channel] : acc;
  }
};

// Backward-data, per group: dx[n, c, h, w] = sum_{k, r, s} w[k, c, r, s] * dy[n, k, oh, ow]
// over the taps whose output (oh, ow) reads (h, w); rows c, columns (n, h, w), depth (k, r, s).
template <typename T>
struct ImplicitBackwardData {
  Geometry s;
  const T *dy, *w;
  T* dx;
  __device__ int64_t rows() const { return s.Cg; }
  __device__ int64_t cols() const { return s.N * s.HW; }
  __device__ int64_t depth() const { return s.Kg * s.RS; }
  __device__ bool a_depth_fastest() const { return true; }
  __device__ bool b_cols_fastest() const { return true; }
  __device__ T load_a(int64_t g, int64_t c, int64_t krs) const {
    return w[((g * s.Kg + krs / s.RS) * s.Cg + c) * s.RS + krs % s.RS];
  }
  __device__ T load_b(int64_t g, int64_t krs, int64_t j) const {
    const int64_t k = krs / s.RS, rs = krs % s.RS, n = j / s.HW, hw = j % s.HW;
    const int64_t th = hw / s.W + s.ph - (rs / s.S) * s.dh, tw = hw % s.W + s.pw - (rs % s.S) * s.dw;
    if (th < 0 || tw < 0 || th % s.sh || tw % s.sw) return T(0);
    const int64_t oh = th / s.sh, ow = tw / s.sw;
    if (oh >= s.Ho || ow >= s.Wo) return T(0);
    return dy[((n * s.K + g * s.Kg + k) * s.Ho + oh) * s.Wo + ow];
  }
  __device__ void store(int64_t g, int64_t c, int64_t j, T acc) const {
    dx[((j / s.HW) * s.C + g * s.Cg + c) * s.HW + j % s.HW] = acc;
  }
};

// Backward-filter, per group: dw[k, crs] = sum_{n, p} dy[n, k, p] * lowered(crs, (n, p));
// rows k, columns crs, depth (n, p).
template <typename T>
struct ImplicitBackwardFilter {
  Geometry s;
  const T *x, *dy;
  T* dw;
  __device__ int64_t rows() const { return s.Kg; }
  __device__ int64_t cols() const { return s.CgRS; }
  __device__ int64_t depth() const { return s.N * s.P; }
  __device__ bool a_depth_fastest() const { return true; }
  __device__ bool b_cols_fastest() const { return false; }  // the lowered matrix is read along (n, p)
  __device__ T load_a(int64_t g, int64_t k, int64_t j) const {
    return dy[((j / s.P) * s.K + g * s.Kg + k) * s.P + j % s.P];
  }
  __device__ T load_b(int64_t g, int64_t j, int64_t crs) const { return lowered(s, x, j / s.P, g, crs, j % s.P); }
  __device__ void store(int64_t g, int64_t k, int64_t crs, T acc) const { dw[(g * s.Kg + k) * s.CgRS + crs] = acc; }
};

// ---- direct: tiled_gemm over shifted views of a padded copy -------------------------
// The CPU's direct algorithm (cpu/conv_direct.cpp) on the GPU: the source (x, or dY for
// backward-data) is copied once into the padded layout of cpu/conv_shape.h's PaddedAxis,
// each channel one flat array of L values, images stacked with shared padding, so that
// tap (r, s) of channel c at output position j is xq[c * L + r*dh*Wq + s*dw + j]. The
// GEMM's B tile is loaded from there with no bounds test; the positions j that are not
// outputs (in the layout's padding) are computed and not stored.
struct DirectLayout {
  int64_t N, groups, channels, cin, m, Hs, Ws, R, S, dh, dw, RS, kdim, Hq, Wq, HWq, Ho, Wo, J, L;
  PaddedAxis h, w;
};

// Forward and backward-filter read x (padding p); backward-data reads dY, padded by
// (R - 1) * dh - p, into Cg channels per group.
DirectLayout direct_layout(const ConvShape& s, ConvDir dir) {
  const bool data = dir == ConvDir::backward_data;
  DirectLayout d;
  d.N = s.N;
  d.groups = s.groups;
  d.channels = data ? s.K : s.C;
  d.cin = data ? s.Kg() : s.Cg();
  d.m = data ? s.Cg() : s.Kg();
  d.Hs = data ? s.Ho : s.H;
  d.Ws = data ? s.Wo : s.W;
  d.R = s.R, d.S = s.S, d.dh = s.dh, d.dw = s.dw, d.RS = s.R * s.S, d.kdim = d.cin * d.RS;
  d.h = padded_axis(d.Hs, data ? (s.R - 1) * s.dh - s.ph : s.ph, s.R, s.dh);
  d.w = padded_axis(d.Ws, data ? (s.S - 1) * s.dw - s.pw : s.pw, s.S, s.dw);
  d.Hq = d.h.q, d.Wq = d.w.q, d.HWq = d.Hq * d.Wq, d.Ho = d.h.out, d.Wo = d.w.out;
  d.J = s.N * d.HWq;
  d.L = d.J + (s.R - 1) * s.dh * d.Wq + (s.S - 1) * s.dw;  // every tap of every position j < J
  return d;
}

// xq[c * L + j] for every channel c of the source: its value where j lands on the data,
// zero elsewhere (every element written, so no separate clearing).
template <typename T>
__global__ void direct_pad_kernel(DirectLayout d, const T* src, T* xq) {
  const int64_t total = d.channels * d.L, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int64_t c = i / d.L, j = i % d.L;
    T v = T(0);
    if (j < d.J) {
      const int64_t n = j / d.HWq, row = (j % d.HWq) / d.Wq, col = j % d.Wq;
      if (row >= d.h.lower && row < d.h.upper && col >= d.w.lower && col < d.w.upper)
        v = src[((n * d.channels + c) * d.Hs + row - d.h.pad) * d.Ws + col - d.w.pad];
    }
    xq[i] = v;
  }
}

// Tap rs's shift in the layout.
__device__ __forceinline__ int64_t direct_shift(const DirectLayout& d, int64_t rs) {
  return (rs / d.S) * d.dh * d.Wq + (rs % d.S) * d.dw;
}

// Forward (rows: output channels k, depth (c, r, s)) and backward-data (rows: input
// channels c, depth (k, r, s) over the weights flipped in both taps), columns the
// layout's positions j, per group.
template <typename T>
struct DirectProduct {
  DirectLayout d;
  const T *xq, *w, *bias;
  T* out;
  bool data;       // backward-data: the weights read flipped and transposed
  int64_t wk, wc;  // the weights' K / groups and C / groups
  __device__ int64_t rows() const { return d.m; }
  __device__ int64_t cols() const { return d.J; }
  __device__ int64_t depth() const { return d.kdim; }
  __device__ bool a_depth_fastest() const { return true; }
  __device__ bool b_cols_fastest() const { return true; }
  __device__ T load_a(int64_t g, int64_t i, int64_t k) const {
    if (!data) return w[(g * d.m + i) * d.kdim + k];
    return w[((g * wk + k / d.RS) * wc + i) * d.RS + (d.RS - 1 - k % d.RS)];
  }
  __device__ T load_b(int64_t g, int64_t k, int64_t j) const {
    return xq[(g * d.cin + k / d.RS) * d.L + direct_shift(d, k % d.RS) + j];
  }
  __device__ void store(int64_t g, int64_t i, int64_t j, T acc) const {
    const int64_t n = j / d.HWq, y = (j % d.HWq) / d.Wq, x = j % d.Wq;
    if (y >= d.Ho || x >= d.Wo) return;  // a position in the layout's padding
    const int64_t channel = g * d.m + i;
    out[((n * d.groups * d.m + channel) * d.Ho + y) * d.Wo + x] = bias ? acc + bias[channel] : acc;
  }
};

// Backward-filter, per group: dw[k, (c, r, s)] = sum_j dY_k[j] * xq_c[j + shift(r, s)] over
// the layout's positions j (dY read as 0 where j is not an output).
template <typename T>
struct DirectFilter {
  DirectLayout d;
  const T *xq, *dy;
  T* dw;
  int64_t K;
  __device__ int64_t rows() const { return d.m; }
  __device__ int64_t cols() const { return d.kdim; }
  __device__ int64_t depth() const { return d.J; }
  __device__ bool a_depth_fastest() const { return true; }
  __device__ bool b_cols_fastest() const { return false; }  // xq is read along j
  __device__ T load_a(int64_t g, int64_t k, int64_t j) const {
    const int64_t n = j / d.HWq, y = (j % d.HWq) / d.Wq, x = j % d.Wq;
    if (y >= d.Ho || x >= d.Wo) return T(0);
    return dy[((n * K + g * d.m + k) * d.Ho + y) * d.Wo + x];
  }
  __device__ T load_b(int64_t g, int64_t j, int64_t crs) const {
    return xq[(g * d.cin + crs / d.RS) * d.L + direct_shift(d, crs % d.RS) + j];
  }
  __device__ void store(int64_t g, int64_t k, int64_t crs, T acc) const { dw[(g * d.m + k) * d.kdim + crs] = acc; }
};

template <typename T>
void direct_pad(const DirectLayout& d, const T* src, T* xq, cudaStream_t stream) {
  launch("conv_direct_pad", direct_pad_kernel<T>, elementwise_grid(d.channels * d.L), dim3(kElementwiseThreads), 0,
         stream, d, src, xq);
}

// ---- im2col, col2im and bias kernels ---------------------------------------------
// col[(c * RS + rs) * P + p] for every channel of image n (all groups).
template <typename T>
__global__ void im2col_kernel(Geometry s, const T* x, int64_t n, T* col) {
  const int64_t total = s.C * s.RS * s.P, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int64_t crs = i / s.P, c = crs / s.RS;  // a channel of the whole image: group 0's view of it
    col[i] = lowered(s, x, n, c / s.Cg, crs - (c / s.Cg) * s.CgRS, i % s.P);
  }
}

// dx[n] from the lowered gradient col (all channels of image n): each input pixel
// gathers the taps that read it.
template <typename T>
__global__ void col2im_kernel(Geometry s, const T* col, int64_t n, T* dx) {
  const int64_t total = s.C * s.HW, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int64_t c = i / s.HW, hw = i % s.HW;
    const T* rows = col + c * s.RS * s.P;
    dx[n * s.C * s.HW + i] =
        gather_taps<T>(s, hw / s.W, hw % s.W, [&](int64_t rs, int64_t p) { return rows[rs * s.P + p]; });
  }
}

template <typename T>
__global__ void bias_add_kernel(int64_t total, int64_t K, int64_t P, const T* bias, T* y) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) y[i] += bias[(i / P) % K];
}

template <typename T>
void add_bias(const Geometry& s, const T* bias, T* y, cudaStream_t stream) {
  const int64_t total = s.N * s.K * s.P;
  if (bias && total)
    launch("conv_bias_add", bias_add_kernel<T>, elementwise_grid(total), dim3(kElementwiseThreads), 0, stream, total,
           s.K, s.P, bias, y);
}

template <typename T>
void im2col(const Geometry& s, const T* x, int64_t n, T* col, cudaStream_t stream) {
  launch("conv_im2col", im2col_kernel<T>, elementwise_grid(s.C * s.RS * s.P), dim3(kElementwiseThreads), 0, stream,
         s, x, n, col);
}

template <typename T>
void col2im(const Geometry& s, const T* col, int64_t n, T* dx, cudaStream_t stream) {
  launch("conv_col2im", col2im_kernel<T>, elementwise_grid(s.C * s.HW), dim3(kElementwiseThreads), 0, stream, s, col,
         n, dx);
}

// ---- depthwise: one input channel per group (Cg = 1), Kg = m output channels each ----------
template <typename T>
__global__ void depthwise_forward_kernel(Geometry s, const T* x, const T* w, const T* bias, T* y) {
  const int64_t total = s.N * s.K * s.P, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int64_t p = i % s.P, k = (i / s.P) % s.K, n = i / (s.P * s.K);
    const int64_t oh = p / s.Wo, ow = p % s.Wo;
    const T* plane = x + (n * s.C + k / s.Kg) * s.HW;
    const T* wk = w + k * s.RS;
    T sum = bias ? bias[k] : T(0);
    for (int64_t r = 0; r < s.R; ++r) {
      const int64_t ih = oh * s.sh - s.ph + r * s.dh;
      if (ih < 0 || ih >= s.H) continue;
      for (int64_t q = 0; q < s.S; ++q) {
        const int64_t iw = ow * s.sw - s.pw + q * s.dw;
        if (iw >= 0 && iw < s.W) sum += wk[r * s.S + q] * plane[ih * s.W + iw];
      }
    }
    y[i] = sum;
  }
}

template <typename T>
__global__ void depthwise_data_kernel(Geometry s, const T* dy, const T* w, T* dx) {
  const int64_t total = s.N * s.C * s.HW, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int64_t hw = i % s.HW, c = (i / s.HW) % s.C, n = i / (s.HW * s.C);
    T sum = 0;
    for (int64_t j = 0; j < s.Kg; ++j) {
      const int64_t k = c * s.Kg + j;
      const T* plane = dy + (n * s.K + k) * s.P;
      const T* wk = w + k * s.RS;
      sum += gather_taps<T>(s, hw / s.W, hw % s.W, [&](int64_t rs, int64_t p) { return wk[rs] * plane[p]; });
    }
    dx[i] = sum;
  }
}

constexpr unsigned kDepthwiseFilterThreads = 256;

// dw[b] for every weight b = k * RS + rs, one thread each summing its N * P products in
// order: where those are few (small planes), a block per weight would leave most of its
// threads idle and pay for its reduction.
template <typename T>
__global__ void depthwise_filter_small_kernel(Geometry s, const T* x, const T* dy, T* dw) {
  const int64_t total = s.K * s.RS, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t b = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; b < total; b += stride) {
    const int64_t k = b / s.RS, rs = b % s.RS, r = rs / s.S, q = rs % s.S;
    const T* xc = x + (k / s.Kg) * s.HW;
    T sum = 0;
    for (int64_t i = 0; i < s.N * s.P; ++i) {
      const int64_t n = i / s.P, p = i % s.P;
      const int64_t ih = (p / s.Wo) * s.sh - s.ph + r * s.dh, iw = (p % s.Wo) * s.sw - s.pw + q * s.dw;
      if (ih >= 0 && ih < s.H && iw >= 0 && iw < s.W)
        sum += dy[(n * s.K + k) * s.P + p] * xc[n * s.C * s.HW + ih * s.W + iw];
    }
    dw[b] = sum;
  }
}

// Block b computes dw[b] (b = k * RS + rs): thread t sums the products of (image, position)
// pairs t, t + 256, ..., then the 256 partial sums are added pairwise in a fixed tree.
template <typename T>
__global__ void depthwise_filter_kernel(Geometry s, const T* x, const T* dy, T* dw) {
  __shared__ T partial[kDepthwiseFilterThreads];
  for (int64_t b = blockIdx.x; b < s.K * s.RS; b += gridDim.x) {
    const int64_t k = b / s.RS, rs = b % s.RS, r = rs / s.S, q = rs % s.S;
    const T* xc = x + (k / s.Kg) * s.HW;
    T sum = 0;
    for (int64_t i = threadIdx.x; i < s.N * s.P; i += kDepthwiseFilterThreads) {
      const int64_t n = i / s.P, p = i % s.P;
      const int64_t ih = (p / s.Wo) * s.sh - s.ph + r * s.dh, iw = (p % s.Wo) * s.sw - s.pw + q * s.dw;
      if (ih >= 0 && ih < s.H && iw >= 0 && iw < s.W)
        sum += dy[(n * s.K + k) * s.P + p] * xc[n * s.C * s.HW + ih * s.W + iw];
    }
    partial[threadIdx.x] = sum;
    __syncthreads();
    for (unsigned half = kDepthwiseFilterThreads / 2; half > 0; half /= 2) {
      if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
      __syncthreads();
    }
    if (threadIdx.x == 0) dw[b] = partial[0];
    __syncthreads();  // partial is written again for the next weight
  }
}

// One GEMM of the per-image, per-group products below (row-major, leading dimensions
// given): gemm.cu's kernel, but under convolution's TF32 switch rather than matmul's.
template <typename T>
void gemm_on(cudaStream_t stream, bool ta, bool tb, int64_t M, int64_t N, int64_t K, const T* a, int64_t lda,
             const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  gemm_tf32_if<T>(tf32_allowed(Tf32Use::conv), ta, tb, M, N, K, T(1), a, lda, b, ldb, beta, c, ldc, stream);
}

// ---- Winograd F(4x4, 3x3) -------------------------------------------------------------
// The CPU's matrices (native/cpu/conv_winograd_impl.h): per 4 x 4 output tile,
// y = A^T [sum over input channels of (G g G^T) . (B^T d B)] A, d the 6 x 6 input tile.
// Per point xi of the 6 x 6 transform domain that sum is a GEMM, M[xi] = U[xi] V[xi]:
// U (output x input channels) from the filters, V (input channels x tiles) from the
// input, 36 x groups products of the tiled kernel. Backward-data is the same forward
// over dY, padded by 2 - p, with every filter turned 180 degrees and its input and output
// channels swapped; backward-filter transforms the input as the forward does and dY's
// tiles as A dy A^T, multiplies them over the tiles, and takes dU back by G^T dU G.
struct WinogradPlan {  // `in` planes (H x W, padding ph, pw) to `out` planes (Ho x Wo)
  int64_t N, groups, cin_g, cout_g, H, W, ph, pw, Ho, Wo, th, tw, tiles;
  bool flipped;  // backward-data: the filters turned and their channels swapped
  __host__ __device__ int64_t u_size() const { return groups * cout_g * cin_g; }
  __host__ __device__ int64_t v_size() const { return groups * cin_g * tiles; }
  __host__ __device__ int64_t m_size() const { return groups * cout_g * tiles; }
  // Tile t's image and (row, column) of tiles: tiles are in order (image, row, column).
  __host__ __device__ void tile_of(int64_t t, int64_t& n, int64_t& ty, int64_t& tx) const {
    n = t / (th * tw), ty = t / tw % th, tx = t % tw;
  }
  int64_t workspace_elements() const { return 36 * (u_size() + v_size() + m_size()); }
};

WinogradPlan winograd_plan(const ConvShape& s, ConvDir dir) {
  WinogradPlan p{};
  p.N = s.N;
  p.groups = s.groups;
  p.flipped = dir == ConvDir::backward_data;
  if (p.flipped) {
    p.cin_g = s.Kg(), p.cout_g = s.Cg(), p.H = s.Ho, p.W = s.Wo, p.ph = 2 - s.ph, p.pw = 2 - s.pw;
    p.Ho = s.H, p.Wo = s.W;
  } else {
    p.cin_g = s.Cg(), p.cout_g = s.Kg(), p.H = s.H, p.W = s.W, p.ph = s.ph, p.pw = s.pw;
    p.Ho = s.Ho, p.Wo = s.Wo;
  }
  p.th = (p.Ho + 3) / 4, p.tw = (p.Wo + 3) / 4, p.tiles = s.N * p.th * p.tw;
  return p;
}

// Entry (a, r) of G, 6 x 3, the filters' transform.
template <typename T>
__device__ __forceinline__ T winograd_g(int a, int r) {
  const T G[6][3] = {{T(1) / 4, 0, 0},
                     {T(-1) / 6, T(-1) / 6, T(-1) / 6},
                     {T(-1) / 6, T(1) / 6, T(-1) / 6},
                     {T(1) / 24, T(1) / 12, T(1) / 6},
                     {T(1) / 24, T(-1) / 12, T(1) / 6},
                     {0, 0, 1}};
  return G[a][r];
}

// U[xi][g][o][i] = (G f G^T)[xi], f the 3 x 3 filter from input channel i to output o.
template <typename T>
__global__ void winograd_filter_kernel(WinogradPlan p, const T* w, T* u) {
  const int64_t total = p.u_size(), stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += stride) {
    const int64_t i = e % p.cin_g, o = e / p.cin_g % p.cout_g, g = e / (p.cin_g * p.cout_g);
    T f[3][3];
    for (int r = 0; r < 3; ++r)
      for (int q = 0; q < 3; ++q)
        f[r][q] = p.flipped ? w[((g * p.cin_g + i) * p.cout_g + o) * 9 + (2 - r) * 3 + (2 - q)]
                            : w[((g * p.cout_g + o) * p.cin_g + i) * 9 + r * 3 + q];
    T gf[6][3];
    for (int a = 0; a < 6; ++a)
      for (int q = 0; q < 3; ++q) {
        gf[a][q] = 0;
        for (int r = 0; r < 3; ++r) gf[a][q] += winograd_g<T>(a, r) * f[r][q];
      }
    for (int a = 0; a < 6; ++a)
      for (int b = 0; b < 6; ++b)
        u[(a * 6 + b) * total + e] =
            gf[a][0] * winograd_g<T>(b, 0) + gf[a][1] * winograd_g<T>(b, 1) + gf[a][2] * winograd_g<T>(b, 2);
  }
}

// B^T x for one column (or row) of six values.
template <typename T>
__device__ __forceinline__ void winograd_bt(const T x[6], T out[6]) {
  out[0] = T(4) * x[0] - T(5) * x[2] + x[4];
  out[1] = x[3] + x[4] - T(4) * (x[1] + x[2]);
  out[2] = T(4) * (x[1] - x[2]) + x[4] - x[3];
  out[3] = T(2) * (x[3] - x[1]) + x[4] - x[2];
  out[4] = T(2) * (x[1] - x[3]) + x[4] - x[2];
  out[5] = T(4) * x[1] - T(5) * x[3] + x[5];
}

// V[xi][g][i][t] = (B^T d B)[xi], d the 6 x 6 tile t of input plane (n, g, i), zeros in
// the padding; tiles in order (image, tile row, tile column).
template <typename T>
__global__ void winograd_input_kernel(WinogradPlan p, const T* in, T* v) {
  const int64_t total = p.v_size(), stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += stride) {
    const int64_t t = e % p.tiles, gi = e / p.tiles, g = gi / p.cin_g, i = gi % p.cin_g;
    int64_t n, ty, tx;
    p.tile_of(t, n, ty, tx);
    const T* plane = in + (n * p.groups * p.cin_g + g * p.cin_g + i) * p.H * p.W;
    T d[6][6], col[6], q[6][6];
    for (int a = 0; a < 6; ++a) {
      const int64_t h = 4 * ty - p.ph + a;
      for (int b = 0; b < 6; ++b) {
        const int64_t x = 4 * tx - p.pw + b;
        d[a][b] = (h >= 0 && h < p.H && x >= 0 && x < p.W) ? plane[h * p.W + x] : T(0);
      }
    }
    for (int b = 0; b < 6; ++b) {  // down the columns
      T c[6];
      for (int a = 0; a < 6; ++a) c[a] = d[a][b];
      winograd_bt(c, col);
      for (int a = 0; a < 6; ++a) q[a][b] = col[a];
    }
    for (int a = 0; a < 6; ++a) {  // along the rows
      winograd_bt(q[a], col);
      for (int b = 0; b < 6; ++b) v[(a * 6 + b) * total + e] = col[b];
    }
  }
}

// A^T m for one column (or row) of six values: four.
template <typename T>
__device__ __forceinline__ void winograd_at(const T m[6], T out[4]) {
  out[0] = m[0] + m[1] + m[2] + m[3] + m[4];
  out[1] = m[1] - m[2] + T(2) * (m[3] - m[4]);
  out[2] = m[1] + m[2] + T(4) * (m[3] + m[4]);
  out[3] = m[1] - m[2] + T(8) * (m[3] - m[4]) + m[5];
}

// The 4 x 4 outputs of tile t of output plane (n, g, o), A^T M A (+ bias), clipped at the
// plane's edges.
template <typename T>
__global__ void winograd_output_kernel(WinogradPlan p, const T* m, const T* bias, T* out) {
  const int64_t total = p.m_size(), stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += stride) {
    const int64_t t = e % p.tiles, go = e / p.tiles, g = go / p.cout_g, o = go % p.cout_g;
    int64_t n, ty, tx;
    p.tile_of(t, n, ty, tx);
    T q[4][6], row[6], y[4];
    for (int b = 0; b < 6; ++b) {  // down the columns
      T c[6];
      for (int a = 0; a < 6; ++a) c[a] = m[(a * 6 + b) * total + e];
      winograd_at(c, y);
      for (int a = 0; a < 4; ++a) q[a][b] = y[a];
    }
    const int64_t channel = g * p.cout_g + o;
    T* plane = out + (n * p.groups * p.cout_g + channel) * p.Ho * p.Wo;
    const T add = bias ? bias[channel] : T(0);
    for (int a = 0; a < 4; ++a) {  // along the rows
      for (int b = 0; b < 6; ++b) row[b] = q[a][b];
      winograd_at(row, y);
      const int64_t h = 4 * ty + a;
      if (h >= p.Ho) break;
      for (int b = 0; b < 4; ++b)
        if (4 * tx + b < p.Wo) plane[h * p.Wo + 4 * tx + b] = y[b] + add;
    }
  }
}

// Backward-filter's side of dY: dM[xi][g][k][t] = (A dy A^T)[xi], dy the 4 x 4 tile t of
// output plane (n, g, k), zeros past the plane's edges: the gradient of M, whose tiles
// A^T M A the forward wrote.
template <typename T>
__global__ void winograd_grad_kernel(WinogradPlan p, const T* dy, T* dm) {
  const int64_t total = p.m_size(), stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += stride) {
    const int64_t t = e % p.tiles, gk = e / p.tiles;
    int64_t n, ty, tx;
    p.tile_of(t, n, ty, tx);
    const T* plane = dy + (n * p.groups * p.cout_g + gk) * p.Ho * p.Wo;
    T d[4][4], q[6][4];
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 4; ++b) {
        const int64_t h = 4 * ty + a, x = 4 * tx + b;
        d[a][b] = (h < p.Ho && x < p.Wo) ? plane[h * p.Wo + x] : T(0);
      }
    // A y for four values y: A = (A^T)^T, 6 x 4
    auto a_times = [](const T y[4], T out[6]) {
      out[0] = y[0];
      out[1] = y[0] + y[1] + y[2] + y[3];
      out[2] = y[0] - y[1] + y[2] - y[3];
      out[3] = y[0] + T(2) * y[1] + T(4) * y[2] + T(8) * y[3];
      out[4] = y[0] - T(2) * y[1] + T(4) * y[2] - T(8) * y[3];
      out[5] = y[3];
    };
    for (int b = 0; b < 4; ++b) {  // down the columns
      T c[4], col[6];
      for (int a = 0; a < 4; ++a) c[a] = d[a][b];
      a_times(c, col);
      for (int a = 0; a < 6; ++a) q[a][b] = col[a];
    }
    for (int a = 0; a < 6; ++a) {  // along the rows
      T row[6];
      a_times(q[a], row);
      for (int b = 0; b < 6; ++b) dm[(a * 6 + b) * total + e] = row[b];
    }
  }
}

// dw = G^T dU G, dU[xi][g][k][c] the gradient of the transformed filter from input
// channel c to output k.
template <typename T>
__global__ void winograd_filter_grad_kernel(WinogradPlan p, const T* du, T* dw) {
  const int64_t total = p.u_size(), stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += stride) {
    T gu[3][6];  // G^T dU
    for (int r = 0; r < 3; ++r)
      for (int b = 0; b < 6; ++b) {
        T sum = 0;
        for (int a = 0; a < 6; ++a) sum += winograd_g<T>(a, r) * du[(a * 6 + b) * total + e];
        gu[r][b] = sum;
      }
    for (int r = 0; r < 3; ++r)
      for (int q = 0; q < 3; ++q) {
        T sum = 0;
        for (int b = 0; b < 6; ++b) sum += gu[r][b] * winograd_g<T>(b, q);
        dw[e * 9 + r * 3 + q] = sum;  // e = (g * Kg + k) * Cg + c: dw's own order
      }
  }
}

// z-th of a batch of row-major products C_z = A_z op(B_z), each matrix `stride_*` from
// the last; op(B) = B^T with trans_b (B stored N x K).
template <typename T>
struct StridedProducts {
  int64_t M, N, K;
  const T *a, *b;
  T* c;
  int64_t stride_a, stride_b, stride_c;
  bool trans_b;

  __device__ int64_t rows() const { return M; }
  __device__ int64_t cols() const { return N; }
  __device__ int64_t depth() const { return K; }
  __device__ bool a_depth_fastest() const { return true; }
  __device__ bool b_cols_fastest() const { return !trans_b; }
  __device__ T load_a(int64_t z, int64_t r, int64_t k) const { return a[z * stride_a + r * K + k]; }
  __device__ T load_b(int64_t z, int64_t k, int64_t n) const {
    return b[z * stride_b + (trans_b ? n * K + k : k * N + n)];
  }
  __device__ void store(int64_t z, int64_t r, int64_t n, T acc) const { c[z * stride_c + r * N + n] = acc; }
};

// The workspace's three parts, 36 matrices each: the filters' side U (or its gradient),
// the input's side V, the products M (or dY's side); and V filled from `in`.
template <typename T>
struct WinogradBuffers {
  T *u, *v, *m;
  WinogradBuffers(const WinogradPlan& p, const T* in, void* workspace, cudaStream_t stream)
      : u(static_cast<T*>(workspace)), v(u + 36 * p.u_size()), m(v + 36 * p.v_size()) {
    launch("conv_winograd_input", winograd_input_kernel<T>, elementwise_grid(p.v_size()), dim3(kElementwiseThreads),
           0, stream, p, in, v);
  }
};

template <typename T>
void winograd(const WinogradPlan& p, const T* in, const T* w, const T* bias, T* out, void* workspace,
              cudaStream_t stream) {
  const WinogradBuffers<T> b(p, in, workspace, stream);
  T *u = b.u, *v = b.v, *m = b.m;
  launch("conv_winograd_filter", winograd_filter_kernel<T>, elementwise_grid(p.u_size()), dim3(kElementwiseThreads),
         0, stream, p, w, u);
  // matrix (xi, g) of U, V and M is the (xi * groups + g)-th of its batch
  const StridedProducts<T> op{p.cout_g, p.tiles, p.cin_g, u, v, m,
                              p.cout_g * p.cin_g, p.cin_g * p.tiles, p.cout_g * p.tiles, false};
  launch_tiled_gemm<T, false>("conv_winograd_gemm", op, p.cout_g, p.tiles, p.cin_g, 36 * p.groups, stream,
                              tf32_allowed(Tf32Use::conv));
  launch("conv_winograd_output", winograd_output_kernel<T>, elementwise_grid(p.m_size()), dim3(kElementwiseThreads),
         0, stream, p, static_cast<const T*>(m), bias, out);
}

// Backward-filter (its plan is the forward's): dU[xi] = dM[xi] V[xi]^T over the tiles, then
// dw = G^T dU G. The workspace as the forward's: dU where U was, dM where M was.
template <typename T>
void winograd_filter_grad(const WinogradPlan& p, const T* x, const T* dy, T* dw, void* workspace,
                          cudaStream_t stream) {
  const WinogradBuffers<T> b(p, x, workspace, stream);
  T *du = b.u, *v = b.v, *dm = b.m;
  launch("conv_winograd_grad", winograd_grad_kernel<T>, elementwise_grid(p.m_size()), dim3(kElementwiseThreads), 0,
         stream, p, dy, dm);
  const StridedProducts<T> op{p.cout_g, p.cin_g, p.tiles, dm, v, du,
                              p.cout_g * p.tiles, p.cin_g * p.tiles, p.cout_g * p.cin_g, true};
  launch_tiled_gemm<T, true, false>("conv_winograd_filter_gemm", op, p.cout_g, p.cin_g, p.tiles, 36 * p.groups, stream,
                                    tf32_allowed(Tf32Use::conv));
  launch("conv_winograd_filter_grad", winograd_filter_grad_kernel<T>, elementwise_grid(p.u_size()),
         dim3(kElementwiseThreads), 0, stream, p, static_cast<const T*>(du), dw);
}

void refuse_unsupported(ConvAlgo algo, ConvDir dir, const ConvShape& s) {
  if (!conv_supports(algo, dir, s)) throw std::invalid_argument("algorithm does not support this problem");
}
}  // namespace

bool conv_supports(ConvAlgo algo, ConvDir, const ConvShape& s) {
  switch (algo) {
    case ConvAlgo::im2col_gemm:
    case ConvAlgo::implicit_gemm: return true;
    case ConvAlgo::gemm_1x1: return s.R == 1 && s.S == 1 && s.sh == 1 && s.sw == 1 && s.ph == 0 && s.pw == 0;
    case ConvAlgo::direct: return s.sh == 1 && s.sw == 1;
    case ConvAlgo::depthwise: return s.C == s.groups;  // as the CPU's
    case ConvAlgo::winograd:  // as the CPU's
      return s.R == 3 && s.S == 3 && s.sh == 1 && s.sw == 1 && s.dh == 1 && s.dw == 1 && s.ph <= 2 && s.pw <= 2;
  }
  return false;
}

template <typename T>
int64_t conv_workspace_bytes(ConvAlgo algo, ConvDir dir, const ConvShape& s) {
  refuse_unsupported(algo, dir, s);
  // im2col_gemm lowers one image at a time: C * R * S rows of P values; direct pads its
  // source once.
  if (algo == ConvAlgo::direct) {
    const DirectLayout d = direct_layout(s, dir);
    return d.channels * d.L * int64_t(sizeof(T));
  }
  // Winograd: the transformed filters, input tiles and products, 36 matrices each
  if (algo == ConvAlgo::winograd) return winograd_plan(s, dir).workspace_elements() * int64_t(sizeof(T));
  return algo == ConvAlgo::im2col_gemm ? s.C * s.R * s.S * s.P() * int64_t(sizeof(T)) : 0;
}

template <typename T>
void conv_forward(ConvAlgo algo, const ConvShape& shape, const T* x, const T* w, const T* bias, T* y, void* workspace,
                  void* stream_ptr) {
  refuse_unsupported(algo, ConvDir::forward, shape);
  const Geometry s = geometry(shape);
  const cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  if (algo == ConvAlgo::implicit_gemm) {
    launch_tiled_gemm<T, false>("conv_implicit_forward", ImplicitForward<T>{s, x, w, bias, y}, s.Kg, s.N * s.P, s.CgRS,
                                shape.groups, stream, tf32_allowed(Tf32Use::conv));
    return;
  }
  if (algo == ConvAlgo::winograd) {
    winograd<T>(winograd_plan(shape, ConvDir::forward), x, w, bias, y, workspace, stream);
    return;
  }
  if (algo == ConvAlgo::depthwise) {
    launch("conv_depthwise_forward", depthwise_forward_kernel<T>, elementwise_grid(s.N * s.K * s.P),
           dim3(kElementwiseThreads), 0, stream, s, x, w, bias, y);
    return;
  }
  if (algo == ConvAlgo::direct) {
    const DirectLayout d = direct_layout(shape, ConvDir::forward);
    T* xq = static_cast<T*>(workspace);
    direct_pad(d, x, xq, stream);
    launch_tiled_gemm<T, false>("conv_direct_forward", DirectProduct<T>{d, xq, w, bias, y, false, s.Kg, s.Cg}, d.m, d.J,
                                d.kdim, shape.groups, stream, tf32_allowed(Tf32Use::conv));
    return;
  }
  T* col = static_cast<T*>(workspace);
  for (int64_t n = 0; n < s.N; ++n) {
    const T* operand = x + n * s.C * s.HW;  // gemm_1x1: the image is its own lowered matrix
    if (algo == ConvAlgo::im2col_gemm) {
      im2col(s, x, n, col, stream);
      operand = col;
    }
    for (int64_t g = 0; g < shape.groups; ++g)
      gemm_on<T>(stream, false, false, s.Kg, s.P, s.CgRS, w + g * s.Kg * s.CgRS, s.CgRS, operand + g * s.CgRS * s.P,
                 s.P, T(0), y + (n * s.K + g * s.Kg) * s.P, s.P);
  }
  add_bias(s, bias, y, stream);
}

template <typename T>
void conv_backward_data(ConvAlgo algo, const ConvShape& shape, const T* dy, const T* w, T* dx, void* workspace,
                        void* stream_ptr) {
  refuse_unsupported(algo, ConvDir::backward_data, shape);
  const Geometry s = geometry(shape);
  const cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  if (algo == ConvAlgo::implicit_gemm) {
    launch_tiled_gemm<T, false>("conv_implicit_backward_data", ImplicitBackwardData<T>{s, dy, w, dx}, s.Cg, s.N * s.HW,
                                s.Kg * s.RS, shape.groups, stream, tf32_allowed(Tf32Use::conv));
    return;
  }
  if (algo == ConvAlgo::winograd) {
    winograd<T>(winograd_plan(shape, ConvDir::backward_data), dy, w, static_cast<const T*>(nullptr), dx, workspace,
                stream);
    return;
  }
  if (algo == ConvAlgo::depthwise) {
    launch("conv_depthwise_backward_data", depthwise_data_kernel<T>, elementwise_grid(s.N * s.C * s.HW),
           dim3(kElementwiseThreads), 0, stream, s, dy, w, dx);
    return;
  }
  if (algo == ConvAlgo::direct) {
    const DirectLayout d = direct_layout(shape, ConvDir::backward_data);
    T* xq = static_cast<T*>(workspace);
    direct_pad(d, dy, xq, stream);
    launch_tiled_gemm<T, false>("conv_direct_backward_data",
                                DirectProduct<T>{d, xq, w, static_cast<const T*>(nullptr), dx, true, s.Kg, s.Cg},
                                d.m, d.J, d.kdim, shape.groups, stream, tf32_allowed(Tf32Use::conv));
    return;
  }
  T* col = static_cast<T*>(workspace);
  for (int64_t n = 0; n < s.N; ++n) {
    // col_g = w_g^T dy[n, g]; gemm_1x1 writes dx[n] directly
    T* out = algo == ConvAlgo::im2col_gemm ? col : dx + n * s.C * s.HW;
    for (int64_t g = 0; g < shape.groups; ++g)
      gemm_on<T>(stream, true, false, s.CgRS, s.P, s.Kg, w + g * s.Kg * s.CgRS, s.CgRS, dy + (n * s.K + g * s.Kg) * s.P,
                 s.P, T(0), out + g * s.CgRS * s.P, s.P);
    if (algo == ConvAlgo::im2col_gemm) col2im(s, static_cast<const T*>(col), n, dx, stream);
  }
}

template <typename T>
void conv_backward_filter(ConvAlgo algo, const ConvShape& shape, const T* x, const T* dy, T* dw, void* workspace,
                          void* stream_ptr) {
  refuse_unsupported(algo, ConvDir::backward_filter, shape);
  const Geometry s = geometry(shape);
  const cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  if (algo == ConvAlgo::implicit_gemm) {
    launch_tiled_gemm<T, true, false>("conv_implicit_backward_filter", ImplicitBackwardFilter<T>{s, x, dy, dw},
                                      s.Kg, s.CgRS, s.N * s.P, shape.groups, stream, tf32_allowed(Tf32Use::conv));
    return;
  }
  if (algo == ConvAlgo::winograd) {
    winograd_filter_grad<T>(winograd_plan(shape, ConvDir::backward_filter), x, dy, dw, workspace, stream);
    return;
  }
  if (algo == ConvAlgo::depthwise) {
    const int64_t weights = s.K * s.RS;
    if (s.N * s.P <= int64_t(kDepthwiseFilterThreads)) {
      launch("conv_depthwise_backward_filter", depthwise_filter_small_kernel<T>, elementwise_grid(weights),
             dim3(kElementwiseThreads), 0, stream, s, x, dy, dw);
      return;
    }
    launch("conv_depthwise_backward_filter", depthwise_filter_kernel<T>,
           dim3(unsigned(weights < 65535 * 64 ? weights : 65535 * 64)), dim3(kDepthwiseFilterThreads), 0, stream, s,
           x, dy, dw);
    return;
  }
  if (algo == ConvAlgo::direct) {
    const DirectLayout d = direct_layout(shape, ConvDir::backward_filter);
    T* xq = static_cast<T*>(workspace);
    direct_pad(d, x, xq, stream);
    launch_tiled_gemm<T, true, false>("conv_direct_backward_filter", DirectFilter<T>{d, xq, dy, dw, s.K}, d.m,
                                      d.kdim, d.J, shape.groups, stream, tf32_allowed(Tf32Use::conv));
    return;
  }
  T* col = static_cast<T*>(workspace);
  for (int64_t n = 0; n < s.N; ++n) {
    const T* operand = x + n * s.C * s.HW;
    if (algo == ConvAlgo::im2col_gemm) {
      im2col(s, x, n, col, stream);
      operand = col;
    }
    // dw_g (+)= dy[n, g] * col_g^T, accumulated over the images in order
    for (int64_t g = 0; g < shape.groups; ++g)
      gemm_on<T>(stream, false, true, s.Kg, s.CgRS, s.P, dy + (n * s.K + g * s.Kg) * s.P, s.P,
                 operand + g * s.CgRS * s.P, s.P, n ? T(1) : T(0), dw + g * s.Kg * s.CgRS, s.CgRS);
  }
}

template <typename T>
void conv_im2col(const ConvShape& shape, const T* x, int64_t n, T* col, void* stream) {
  im2col(geometry(shape), x, n, col, static_cast<cudaStream_t>(stream));
}

template <typename T>
void conv_col2im(const ConvShape& shape, const T* col, int64_t n, T* dx, void* stream) {
  col2im(geometry(shape), col, n, dx, static_cast<cudaStream_t>(stream));
}

#define MINIFW_INSTANTIATE_CONV(T)                                                                                \
  template int64_t conv_workspace_bytes<T>(ConvAlgo, ConvDir, const ConvShape&);                                  \
  template void conv_forward<T>(ConvAlgo, const ConvShape&, const T*, const T*, const T*, T*, void*, void*);      \
  template void conv_backward_data<T>(ConvAlgo, const ConvShape&, const T*, const T*, T*, void*, void*);          \
  template void conv_backward_filter<T>(ConvAlgo, const ConvShape&, const T*, const T*, T*, void*, void*);        \
  template void conv_im2col<T>(const ConvShape&, const T*, int64_t, T*, void*);                                   \
  template void conv_col2im<T>(const ConvShape&, const T*, int64_t, T*, void*);
MINIFW_INSTANTIATE_CONV(float)
MINIFW_INSTANTIATE_CONV(double)
}  // namespace MINIFW_CUDA_NS
}  // namespace minifw
