// The depthwise convolution's per-plane kernels, compiled once per ISA
// (conv_depthwise.cpp, conv_depthwise_avx2.cpp, conv_depthwise_avx512.cpp): loops over
// output rows the compiler vectorizes under each ISA's flags.
// Everything is in an anonymous namespace, and no standard-library template is
// instantiated here, so each ISA's code stays in its own translation unit.
//
// A depthwise filter is R x S numbers per channel, so there is no GEMM to feed: each tap
// (r, s) is one multiply-add of a whole output row by an input row. For every output row
// and tap, the columns whose tap lands inside the input row ([owa, owb), dw_columns) are
// one run: a unit-stride loop at stride 1 (stride 2 is compiled specially too), with no
// test per element and nothing stored for the padding. Each plane is read and written
// in place; the sums run in the same order on every ISA and thread count (backward-filter:
// 16 partial sums per tap, whatever the vector width, added up in order at the end).
#pragma once
#include <cstdint>

#include "conv_depthwise.h"

namespace minifw {
namespace {

// The output columns [owa, owb) of a row whose tap at column offset s * dw - pw reads
// inside the input row: iw = ow * sw + off in [0, W).
inline void dw_columns(const DepthwisePlane& g, int64_t s, int64_t& owa, int64_t& owb, int64_t& off) {
  off = s * g.dw - g.pw;
  owa = off >= 0 ? 0 : (-off + g.sw - 1) / g.sw;
  const int64_t last = g.W - 1 - off;  // ow * sw <= last
  owb = last < 0 ? 0 : last / g.sw + 1;
  if (owb > g.Wo) owb = g.Wo;
  if (owb < owa) owb = owa;
}

// y[i] += v * x[i * step] for i < n
template <typename T, int SW>
inline void axpy_row(int64_t n, T v, const T* __restrict x, int64_t sw, T* __restrict y) {
  const int64_t step = SW ? SW : sw;
  for (int64_t i = 0; i < n; ++i) y[i] += v * x[i * step];
}

template <typename T, int SW>
void forward_plane(const DepthwisePlane& g, const T* x, const T* w, T bias, T* y) {
  const int64_t step = SW ? SW : g.sw;
  for (int64_t oh = 0; oh < g.Ho; ++oh) {
    T* __restrict yr = y + oh * g.Wo;
    for (int64_t i = 0; i < g.Wo; ++i) yr[i] = bias;
    for (int64_t r = 0; r < g.R; ++r) {
      const int64_t ih = oh * g.sh - g.ph + r * g.dh;
      if (ih < 0 || ih >= g.H) continue;
      const T* xr = x + ih * g.W;
      for (int64_t s = 0; s < g.S; ++s) {
        int64_t owa, owb, off;
        dw_columns(g, s, owa, owb, off);
        if (owa < owb) axpy_row<T, SW>(owb - owa, w[r * g.S + s], xr + owa * step + off, g.sw, yr + owa);
      }
    }
  }
}

// dx[i * step] += v * dy[i] for i < n
template <typename T, int SW>
inline void scatter_row(int64_t n, T v, const T* __restrict dy, int64_t sw, T* __restrict dx) {
  const int64_t step = SW ? SW : sw;
  for (int64_t i = 0; i < n; ++i) dx[i * step] += v * dy[i];
}

template <typename T, int SW>
void backward_data_plane(const DepthwisePlane& g, const T* dy, int64_t m, const T* w, T* dx) {
  const int64_t step = SW ? SW : g.sw;
  for (int64_t i = 0; i < g.H * g.W; ++i) dx[i] = T(0);
  const int64_t P = g.Ho * g.Wo, RS = g.R * g.S;
  for (int64_t j = 0; j < m; ++j) {
    for (int64_t oh = 0; oh < g.Ho; ++oh) {
      const T* dyr = dy + j * P + oh * g.Wo;
      for (int64_t r = 0; r < g.R; ++r) {
        const int64_t ih = oh * g.sh - g.ph + r * g.dh;
        if (ih < 0 || ih >= g.H) continue;
        T* dxr = dx + ih * g.W;
        for (int64_t s = 0; s < g.S; ++s) {
          int64_t owa, owb, off;
          dw_columns(g, s, owa, owb, off);
          if (owa < owb)
            scatter_row<T, SW>(owb - owa, w[j * RS + r * g.S + s], dyr + owa, g.sw, dxr + owa * step + off);
        }
      }
    }
  }
}

constexpr int kDepthwiseLanes = 16;

template <typename T, int SW>
void backward_filter_plane(const DepthwisePlane& g, const T* x, const T* dy, T* dw) {
  const int64_t step = SW ? SW : g.sw;
  for (int64_t r = 0; r < g.R; ++r) {
    for (int64_t s = 0; s < g.S; ++s) {
      int64_t owa, owb, off;
      dw_columns(g, s, owa, owb, off);
      T lanes[kDepthwiseLanes] = {};
      for (int64_t oh = 0; oh < g.Ho && owa < owb; ++oh) {
        const int64_t ih = oh * g.sh - g.ph + r * g.dh;
        if (ih < 0 || ih >= g.H) continue;
        const T* __restrict a = dy + oh * g.Wo + owa;
        const T* __restrict b = x + ih * g.W + off + owa * step;
        const int64_t n = owb - owa;
        int64_t i = 0;
        for (; i + kDepthwiseLanes <= n; i += kDepthwiseLanes)
          for (int l = 0; l < kDepthwiseLanes; ++l) lanes[l] += a[i + l] * b[(i + l) * step];
        for (int l = 0; i + l < n; ++l) lanes[l] += a[i + l] * b[(i + l) * step];
      }
      T sum = T(0);
      for (int l = 0; l < kDepthwiseLanes; ++l) sum += lanes[l];
      dw[r * g.S + s] += sum;
    }
  }
}

// ---- narrow planes at stride 1: the padded plane, each tap one run over it ----------------
// A row of a few outputs makes each tap's run too short to pay for its loop. At stride 1,
// in a copy of the plane padded to Hp x Wq (Hp = H + 2 ph, Wq = W + 2 pw), output (oh, ow)
// reads tap (r, s) at (oh + r dh) Wq + ow + s dw: with the outputs laid out Wq apart too,
// each tap is one run of Ho Wq values over the whole plane, shifted by r dh Wq + s dw. The
// columns from Wo to Wq of that layout are computed and dropped (forward), or hold zeros
// (the gradients), so every sum holds the same terms as the row kernels'; the runs read up
// to (S - 1) dw values past the padded plane, kept as zeros.

template <typename T>
inline void pad_plane(const DepthwisePlane& g, const T* src, T* dst) {
  const int64_t Hp = g.H + 2 * g.ph, Wq = g.W + 2 * g.pw, total = Hp * Wq + (g.S - 1) * g.dw;
  for (int64_t i = 0; i < total; ++i) dst[i] = T(0);
  for (int64_t h = 0; h < g.H; ++h)
    for (int64_t w = 0; w < g.W; ++w) dst[(h + g.ph) * Wq + g.pw + w] = src[h * g.W + w];
}

template <typename T>
void forward_padded(const DepthwisePlane& g, const T* x, const T* w, T bias, T* y, T* scratch) {
  const int64_t Wq = g.W + 2 * g.pw, n = g.Ho * Wq;
  T* xp = scratch;
  T* __restrict acc = scratch + (g.H + 2 * g.ph) * Wq + (g.S - 1) * g.dw;
  pad_plane(g, x, xp);
  for (int64_t i = 0; i < n; ++i) acc[i] = bias;
  for (int64_t r = 0; r < g.R; ++r)
    for (int64_t s = 0; s < g.S; ++s) axpy_row<T, 1>(n, w[r * g.S + s], xp + r * g.dh * Wq + s * g.dw, 1, acc);
  for (int64_t oh = 0; oh < g.Ho; ++oh)
    for (int64_t ow = 0; ow < g.Wo; ++ow) y[oh * g.Wo + ow] = acc[oh * Wq + ow];
}

template <typename T>
void backward_data_padded(const DepthwisePlane& g, const T* dy, int64_t m, const T* w, T* dx, T* scratch) {
  const int64_t Wq = g.W + 2 * g.pw, n = g.Ho * Wq, P = g.Ho * g.Wo, RS = g.R * g.S;
  T* __restrict dxp = scratch;
  T* dys = scratch + (g.H + 2 * g.ph) * Wq + (g.S - 1) * g.dw;
  for (int64_t i = 0; i < (g.H + 2 * g.ph) * Wq + (g.S - 1) * g.dw; ++i) dxp[i] = T(0);
  for (int64_t i = 0; i < n; ++i) dys[i] = T(0);
  for (int64_t j = 0; j < m; ++j) {
    for (int64_t oh = 0; oh < g.Ho; ++oh)
      for (int64_t ow = 0; ow < g.Wo; ++ow) dys[oh * Wq + ow] = dy[j * P + oh * g.Wo + ow];
    for (int64_t r = 0; r < g.R; ++r)
      for (int64_t s = 0; s < g.S; ++s) scatter_row<T, 1>(n, w[j * RS + r * g.S + s], dys, 1, dxp + r * g.dh * Wq + s * g.dw);
  }
  for (int64_t h = 0; h < g.H; ++h)
    for (int64_t v = 0; v < g.W; ++v) dx[h * g.W + v] = dxp[(h + g.ph) * Wq + g.pw + v];
}

// sum over i < n of a[i] * b[i], in kDepthwiseLanes partial sums added up in order
template <typename T>
inline T lane_dot(int64_t n, const T* __restrict a, const T* __restrict b) {
  T lanes[kDepthwiseLanes] = {};
  int64_t i = 0;
  for (; i + kDepthwiseLanes <= n; i += kDepthwiseLanes)
    for (int l = 0; l < kDepthwiseLanes; ++l) lanes[l] += a[i + l] * b[i + l];
  for (int l = 0; i + l < n; ++l) lanes[l] += a[i + l] * b[i + l];
  T sum = T(0);
  for (int l = 0; l < kDepthwiseLanes; ++l) sum += lanes[l];
  return sum;
}

template <typename T>
void backward_filter_padded(const DepthwisePlane& g, const T* x, const T* dy, T* dw, T* scratch) {
  const int64_t Wq = g.W + 2 * g.pw, n = g.Ho * Wq;
  T* xp = scratch;
  T* dys = scratch + (g.H + 2 * g.ph) * Wq + (g.S - 1) * g.dw;
  pad_plane(g, x, xp);
  for (int64_t i = 0; i < n; ++i) dys[i] = T(0);
  for (int64_t oh = 0; oh < g.Ho; ++oh)
    for (int64_t ow = 0; ow < g.Wo; ++ow) dys[oh * Wq + ow] = dy[oh * g.Wo + ow];
  for (int64_t r = 0; r < g.R; ++r)
    for (int64_t s = 0; s < g.S; ++s) dw[r * g.S + s] += lane_dot(n, dys, xp + r * g.dh * Wq + s * g.dw);
}

inline bool use_padded(const DepthwisePlane& g) {
  return g.sh == 1 && g.sw == 1 && g.Wo < kDepthwisePaddedBelow;
}

// The scratch values each thread needs: the padded plane, the (S - 1) dw zeros its runs read
// past it, and the outputs (or dy) laid out Wq apart; none where the rows are used.
inline int64_t depthwise_scratch_elements(const DepthwisePlane& g) {
  if (!use_padded(g)) return 0;
  const int64_t Wq = g.W + 2 * g.pw;
  return (g.H + 2 * g.ph) * Wq + (g.S - 1) * g.dw + g.Ho * Wq;
}

template <typename T>
void forward_any(const DepthwisePlane& g, const T* x, const T* w, T bias, T* y, T* scratch) {
  if (use_padded(g)) return forward_padded<T>(g, x, w, bias, y, scratch);
  if (g.sw == 1) return forward_plane<T, 1>(g, x, w, bias, y);
  if (g.sw == 2) return forward_plane<T, 2>(g, x, w, bias, y);
  forward_plane<T, 0>(g, x, w, bias, y);
}

template <typename T>
void backward_data_any(const DepthwisePlane& g, const T* dy, int64_t m, const T* w, T* dx, T* scratch) {
  if (use_padded(g)) return backward_data_padded<T>(g, dy, m, w, dx, scratch);
  if (g.sw == 1) return backward_data_plane<T, 1>(g, dy, m, w, dx);
  if (g.sw == 2) return backward_data_plane<T, 2>(g, dy, m, w, dx);
  backward_data_plane<T, 0>(g, dy, m, w, dx);
}

template <typename T>
void backward_filter_any(const DepthwisePlane& g, const T* x, const T* dy, T* dw, T* scratch) {
  if (use_padded(g)) return backward_filter_padded<T>(g, x, dy, dw, scratch);
  if (g.sw == 1) return backward_filter_plane<T, 1>(g, x, dy, dw);
  if (g.sw == 2) return backward_filter_plane<T, 2>(g, x, dy, dw);
  backward_filter_plane<T, 0>(g, x, dy, dw);
}

template <typename T>
DepthwiseKernels<T> make_depthwise_kernels() {
  return {&forward_any<T>, &backward_data_any<T>, &backward_filter_any<T>};
}

}  // namespace
}  // namespace minifw
