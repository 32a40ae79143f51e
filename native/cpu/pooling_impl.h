// Per-plane pooling kernels, compiled once per ISA (pooling.cpp,
// pooling_avx2.cpp, pooling_avx512.cpp): loops the compiler vectorizes (any
// T), and for float on AVX2 / AVX-512 explicit SIMD over the traits of
// simd_avx2.h / simd_avx512.h.
// Everything is in an anonymous namespace, and no standard-library template
// is instantiated here, so each ISA's code stays in its own translation unit.
//
// Each output row is split into border columns (windows that cross the left
// or right edge: scalar code with clipping) and interior columns, where every
// window lies inside the row. In the interior a kernel sweeps the window taps
// (r, s) in row-major order and, for each tap, all interior columns at once:
// a unit- or constant-stride loop (stride 1 and 2 are compiled specially).
// Max pooling's taps lie (dh, dw) apart (the dilation; 1 for average pooling): the
// max kernels are compiled twice, DIL false taking the taps as adjacent (constants the
// compiler folds: LeNet's and AlexNet's pools ran 5-10% slower with the runtime steps).
#pragma once
#include <cstdint>
#include <limits>
#include <type_traits>

#include "pooling.h"

namespace minifw {
namespace {

inline int64_t lo_clip(int64_t a, int64_t b) { return a > b ? a : b; }
inline int64_t hi_clip(int64_t a, int64_t b) { return a < b ? a : b; }

// Interior output columns [owa, owb): windows fully inside [0, W).
inline void interior_columns(const PoolShape& s, int64_t& owa, int64_t& owb) {
  const int64_t extent = s.dw * (s.kw - 1) + 1;
  owa = (s.pw + s.sw - 1) / s.sw;
  owb = s.W + s.pw >= extent ? (s.W + s.pw - extent) / s.sw + 1 : 0;
  owb = hi_clip(owb, s.Wo);
  if (owb < owa) owb = owa;
}

// The taps of a window starting at `start` (in the padded frame) that land in
// [0, size): positions first, first + d, ... below end.
inline void taps_inside(int64_t start, int64_t k, int64_t d, int64_t size, int64_t& first, int64_t& end) {
  if (d == 1) {  // (no division on the common path: this runs per output row and border column)
    first = lo_clip(start, 0);
    end = hi_clip(start + k, size);
    return;
  }
  first = start >= 0 ? start : start + (-start + d - 1) / d * d;
  end = hi_clip(start + d * (k - 1) + 1, size);
}

// "v replaces best": strictly greater keeps the first maximum; a NaN wins
// over any number, and the first NaN wins over later ones.
template <typename T>
inline bool takes_over(T v, T best) {
  return v > best || (v != v && best == best);
}

template <typename T, int SW, bool IDX, bool DIL>
void max_interior(const PoolShape& s, const T* x, int64_t hs, int64_t he, int64_t c0, int64_t n, T* best,
                  typename std::conditional<sizeof(T) == 4, int32_t, int64_t>::type* bidx) {
  using I = typename std::conditional<sizeof(T) == 4, int32_t, int64_t>::type;
  const int64_t sw = SW ? SW : s.sw, W = s.W, dh = DIL ? s.dh : 1, dw = DIL ? s.dw : 1;
  const T neg_inf = -std::numeric_limits<T>::infinity();
  for (int64_t i = 0; i < n; ++i) {
    best[i] = neg_inf;
    if (IDX) bidx[i] = static_cast<I>(hs * W + c0 + i * sw);  // PyTorch's start when all are -inf
  }
  for (int64_t r = hs; r < he; r += dh) {
    for (int64_t t = 0; t < s.kw; ++t) {
      const T* p = x + r * W + c0 + t * dw;
      const I first = static_cast<I>(r * W + c0 + t * dw);
      for (int64_t i = 0; i < n; ++i) {
        const T v = p[i * sw];
        const bool take = takes_over(v, best[i]);
        best[i] = take ? v : best[i];
        if (IDX) bidx[i] = take ? static_cast<I>(first + i * sw) : bidx[i];
      }
    }
  }
}

// The interior of one output row, by loops the compiler vectorizes: y and
// indices for columns [owa, owa + n).
template <typename T, int SW, bool IDX, bool DIL>
struct MaxInteriorLoops {
  static void run(const PoolShape& s, const T* x, int64_t hs, int64_t he, int64_t owa, int64_t n, T* yrow,
                  int64_t* irow, void* scratch) {
    using I = typename std::conditional<sizeof(T) == 4, int32_t, int64_t>::type;
    T* best = static_cast<T*>(scratch);
    I* bidx = reinterpret_cast<I*>(best + s.Wo);
    max_interior<T, SW, IDX, DIL>(s, x, hs, he, owa * s.sw - s.pw, n, best, bidx);
    for (int64_t i = 0; i < n; ++i) {
      yrow[owa + i] = best[i];
      if (IDX) irow[owa + i] = bidx[i];
    }
  }
};

template <typename T, int SW, bool IDX, bool DIL, class Interior = MaxInteriorLoops<T, SW, IDX, DIL>>
void max_plane_impl(const PoolShape& s, const T* x, T* y, int64_t* indices, void* scratch) {
  const int64_t dh = DIL ? s.dh : 1, dw = DIL ? s.dw : 1;
  int64_t owa, owb;
  interior_columns(s, owa, owb);
  for (int64_t oh = 0; oh < s.Ho; ++oh) {
    int64_t hs, he;  // rows hs, hs + dh, ... below he
    taps_inside(oh * s.sh - s.ph, s.kh, dh, s.H, hs, he);
    T* yrow = y + oh * s.Wo;
    int64_t* irow = IDX ? indices + oh * s.Wo : nullptr;
    for (int64_t ow = 0; ow < s.Wo; ++ow) {
      if (ow == owa && owb > owa) {  // the vectorized interior
        Interior::run(s, x, hs, he, owa, owb - owa, yrow, irow, scratch);
        ow = owb - 1;
        continue;
      }
      int64_t ws, we;
      taps_inside(ow * s.sw - s.pw, s.kw, dw, s.W, ws, we);
      T m = -std::numeric_limits<T>::infinity();
      int64_t mi = hs * s.W + ws;
      for (int64_t r = hs; r < he; r += dh)
        for (int64_t c = ws; c < we; c += dw) {
          const T v = x[r * s.W + c];
          if (takes_over(v, m)) {
            m = v;
            mi = r * s.W + c;
          }
        }
      yrow[ow] = m;
      if (IDX) irow[ow] = mi;
    }
  }
}

template <typename T, int SW>
void avg_interior(const T* x, int64_t W, int64_t hs, int64_t he, int64_t kw, int64_t sw_runtime, int64_t c0,
                  int64_t n, T* acc) {
  const int64_t sw = SW ? SW : sw_runtime;
  for (int64_t i = 0; i < n; ++i) acc[i] = T(0);
  for (int64_t r = hs; r < he; ++r)
    for (int64_t t = 0; t < kw; ++t) {
      const T* p = x + r * W + c0 + t;
      for (int64_t i = 0; i < n; ++i) acc[i] += p[i * sw];
    }
}

template <typename T, int SW>
struct AvgInteriorLoops {
  static void run(const PoolShape& s, const T* x, int64_t hs, int64_t he, int64_t owa, int64_t n, T inv,
                  T* yrow, void* scratch) {
    T* acc = static_cast<T*>(scratch);
    avg_interior<T, SW>(x, s.W, hs, he, s.kw, s.sw, owa * s.sw - s.pw, n, acc);
    for (int64_t i = 0; i < n; ++i) yrow[owa + i] = acc[i] * inv;
  }
};

template <typename T, int SW, class Interior = AvgInteriorLoops<T, SW>>
void avg_plane_impl(const PoolShape& s, bool include_pad, const T* x, T* y, void* scratch) {
  int64_t owa, owb;
  interior_columns(s, owa, owb);
  for (int64_t oh = 0; oh < s.Ho; ++oh) {
    const int64_t h0 = oh * s.sh - s.ph;
    const int64_t hs = lo_clip(h0, 0), he = hi_clip(h0 + s.kh, s.H);
    const int64_t rows = include_pad ? hi_clip(h0 + s.kh, s.H + s.ph) - h0 : he - hs;
    T* yrow = y + oh * s.Wo;
    for (int64_t ow = 0; ow < s.Wo; ++ow) {
      if (ow == owa && owb > owa) {
        const T inv_area = T(1) / (static_cast<T>(rows) * static_cast<T>(s.kw));  // (a product in T cannot wrap)
        Interior::run(s, x, hs, he, owa, owb - owa, inv_area, yrow, scratch);
        ow = owb - 1;
        continue;
      }
      const int64_t w0 = ow * s.sw - s.pw;
      const int64_t ws = lo_clip(w0, 0), we = hi_clip(w0 + s.kw, s.W);
      const int64_t cols = include_pad ? hi_clip(w0 + s.kw, s.W + s.pw) - w0 : we - ws;
      T sum = 0;
      for (int64_t r = hs; r < he; ++r)
        for (int64_t c = ws; c < we; ++c) sum += x[r * s.W + c];
      yrow[ow] = sum / (static_cast<T>(rows) * static_cast<T>(cols));
    }
  }
}

// ---- explicit SIMD interiors (float, under AVX2 / AVX-512 traits V) ----------
// A vector of output columns keeps its running maximum and index in registers
// across all window taps; stride 2 loads two vectors and keeps the even lanes,
// other strides gather.

template <class V, int SW>
inline typename V::reg load_columns(const float* p, int64_t sw, typename V::ireg offsets, int64_t m) {
  if (SW == 1) return m == V::lanes ? V::load(p) : V::load_n(p, m);
  if (SW == 2) return V::load_stride2_n(p, m);
  (void)sw;
  return V::gather_n(p, offsets, m);
}

template <class V, int SW, bool IDX, bool DIL>
struct MaxInteriorSimd {
  static void run(const PoolShape& s, const float* x, int64_t hs, int64_t he, int64_t owa, int64_t n,
                  float* yrow, int64_t* irow, void*) {
    const int64_t sw = SW ? SW : s.sw, dh = DIL ? s.dh : 1, dw = DIL ? s.dw : 1;
    const typename V::ireg step = V::iota_times(static_cast<int32_t>(sw));
    for (int64_t i0 = 0; i0 < n; i0 += V::lanes) {
      const int64_t m = n - i0 < V::lanes ? n - i0 : V::lanes;
      const int64_t col = (owa + i0) * sw - s.pw;
      typename V::reg best = V::set1(-std::numeric_limits<float>::infinity());
      typename V::ireg bidx = V::iadd(V::iset1(static_cast<int32_t>(hs * s.W + col)), step);
      for (int64_t r = hs; r < he; r += dh)
        for (int64_t t = 0; t < s.kw; ++t) {
          const int64_t off = r * s.W + col + t * dw;
          const typename V::reg v = load_columns<V, SW>(x + off, sw, step, m);
          // takes_over, lane-wise: v > best, or v is the first NaN
          const auto take = V::mor(V::gt(v, best), V::mandnot(V::isnan(best), V::isnan(v)));
          best = V::blend(take, v, best);
          if (IDX) bidx = V::iblend(take, V::iadd(V::iset1(static_cast<int32_t>(off)), step), bidx);
        }
      if (m == V::lanes) V::store(yrow + owa + i0, best);
      else V::store_n(yrow + owa + i0, best, m);
      if (IDX) V::store_index64_n(irow + owa + i0, bidx, m);
    }
  }
};

template <class V, int SW>
struct AvgInteriorSimd {
  static void run(const PoolShape& s, const float* x, int64_t hs, int64_t he, int64_t owa, int64_t n, float inv,
                  float* yrow, void*) {
    const int64_t sw = SW ? SW : s.sw;
    const typename V::ireg step = V::iota_times(static_cast<int32_t>(sw));
    for (int64_t i0 = 0; i0 < n; i0 += V::lanes) {
      const int64_t m = n - i0 < V::lanes ? n - i0 : V::lanes;
      const int64_t col = (owa + i0) * sw - s.pw;
      typename V::reg acc = V::set1(0.0f);
      for (int64_t r = hs; r < he; ++r)
        for (int64_t t = 0; t < s.kw; ++t) acc = V::add(acc, load_columns<V, SW>(x + r * s.W + col + t, sw, step, m));
      acc = V::mul(acc, V::set1(inv));
      if (m == V::lanes) V::store(yrow + owa + i0, acc);
      else V::store_n(yrow + owa + i0, acc, m);
    }
  }
};

// ---- kernel tables --------------------------------------------------------------

// MaxI<SW, IDX, DIL> / AvgI<SW>: the interior policies to use.
template <typename T, template <int, bool, bool> class MaxI, template <int> class AvgI>
struct PoolDispatch {
  template <bool IDX, bool DIL>
  static void max_strided(const PoolShape& s, const T* x, T* y, int64_t* indices, void* scratch) {
    if (s.sw == 1) max_plane_impl<T, 1, IDX, DIL, MaxI<1, IDX, DIL>>(s, x, y, indices, scratch);
    else if (s.sw == 2) max_plane_impl<T, 2, IDX, DIL, MaxI<2, IDX, DIL>>(s, x, y, indices, scratch);
    else max_plane_impl<T, 0, IDX, DIL, MaxI<0, IDX, DIL>>(s, x, y, indices, scratch);
  }
  static void max_plane(const PoolShape& s, const T* x, T* y, int64_t* indices, void* scratch) {
    const bool dilated = s.dh != 1 || s.dw != 1;
    if (indices) {
      if (dilated) max_strided<true, true>(s, x, y, indices, scratch);
      else max_strided<true, false>(s, x, y, indices, scratch);
    } else {
      if (dilated) max_strided<false, true>(s, x, y, nullptr, scratch);
      else max_strided<false, false>(s, x, y, nullptr, scratch);
    }
  }
  static void avg_plane(const PoolShape& s, bool include_pad, const T* x, T* y, void* scratch) {
    if (s.sw == 1) avg_plane_impl<T, 1, AvgI<1>>(s, include_pad, x, y, scratch);
    else if (s.sw == 2) avg_plane_impl<T, 2, AvgI<2>>(s, include_pad, x, y, scratch);
    else avg_plane_impl<T, 0, AvgI<0>>(s, include_pad, x, y, scratch);
  }
};

template <typename T>
struct Loops {
  template <int SW, bool IDX, bool DIL> using Max = MaxInteriorLoops<T, SW, IDX, DIL>;
  template <int SW> using Avg = AvgInteriorLoops<T, SW>;
};
template <class V>
struct Simd {
  template <int SW, bool IDX, bool DIL> using Max = MaxInteriorSimd<V, SW, IDX, DIL>;
  template <int SW> using Avg = AvgInteriorSimd<V, SW>;
};

// Autovectorized loops (any T).
template <typename T>
PoolKernels<T> make_pool_kernels() {
  using D = PoolDispatch<T, Loops<T>::template Max, Loops<T>::template Avg>;
  return {D::max_plane, D::avg_plane};
}

// Explicit SIMD over traits V (float).
template <class V>
PoolKernels<float> make_pool_kernels_simd() {
  using D = PoolDispatch<float, Simd<V>::template Max, Simd<V>::template Avg>;
  return {D::max_plane, D::avg_plane};
}

}  // namespace
}  // namespace minifw
