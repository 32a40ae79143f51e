// LRN block kernels: loops the compiler vectorizes along the contiguous
// position axis, compiled once per ISA (lrn.cpp, lrn_avx2.cpp,
// lrn_avx512.cpp), with the same ISA's vecmath for scale^-beta. Anonymous
// namespace and no standard-library templates: each ISA's copy stays in its
// own translation unit.
//
// The running window sums are kept in double and compensated (Knuth's
// TwoSum): a sliding sum subtracts what it added earlier, and a large value
// leaving the window would otherwise leave its rounding error behind in the
// small sums that follow. With the compensation each sum is accurate relative
// to the values now in its window.
#pragma once
#include <cstdint>

#include "lrn.h"
#include "vecmath.h"

namespace minifw {
namespace {

// sum + comp += t, keeping in comp what rounding dropped from sum.
inline void two_sum_add(double& sum, double& comp, double t) {
  const double u = sum + t;
  const double t_part = u - sum;
  comp += (sum - (u - t_part)) + (t - t_part);
  sum = u;
}

// (The outputs here are scratch rows or output arrays, which share no memory
// with the inputs (the bindings check it): __restrict spares the compiler the
// run-time overlap checks that would otherwise stop it vectorizing.)
//
// scale = k + an * (window sum), then the window slides by one channel:
// + xa^2 when a channel enters it, - xr^2 when one leaves (one pass over the
// running sums). A sum of squares that cancelled to a tiny negative value is 0.
template <typename T, bool ENTER, bool LEAVE>
void scale_then_slide(int64_t B, T k, T an, const T* xa, const T* xr, double* __restrict acc,
                      double* __restrict comp, T* __restrict sc) {
  for (int64_t i = 0; i < B; ++i) {
    const T a = static_cast<T>(acc[i] + comp[i]);  // (clamped after the conversion, which vectorizes)
    sc[i] = k + an * (a > T(0) ? a : T(0));
    double sum = acc[i], cmp = comp[i];
    if (ENTER) {
      const double v = static_cast<double>(xa[i]);
      two_sum_add(sum, cmp, v * v);
    }
    if (LEAVE) {
      const double v = static_cast<double>(xr[i]);
      two_sum_add(sum, cmp, -(v * v));
    }
    acc[i] = sum;
    comp[i] = cmp;
  }
}

// Whether every running sum of a block stayed finite. An inf or NaN that
// entered a window makes its sum inf and, once it leaves, NaN for good (and
// poisons the compensation at once), so finite sums at the end mean the block
// held no such value and the sliding was exact to its compensation.
inline bool sums_finite(int64_t B, const double* acc, const double* comp) {
  bool ok = true;
  for (int64_t i = 0; i < B; ++i) {
    const double v = acc[i] + comp[i];
    ok &= v - v == 0.0;  // false for inf and NaN
  }
  return ok;
}

// The slow path for a block holding an inf or NaN: every window summed afresh
// (O(size) per element), so such a value reaches only the windows that hold it.
template <typename T, Isa I>
void lrn_forward_block_direct(const LrnShape& s, const T* x, T* y, T* scale, int64_t B, void* scratch) {
  const int64_t C = s.C, st = s.HW, lo = s.size / 2, hi = (s.size - 1) / 2;
  double* acc = static_cast<double*>(scratch);
  T* pw = reinterpret_cast<T*>(acc + 2 * B);
  const T k = static_cast<T>(s.k), an = static_cast<T>(s.alpha / static_cast<double>(s.size));
  for (int64_t c = 0; c < C; ++c) {
    for (int64_t i = 0; i < B; ++i) acc[i] = 0;
    for (int64_t j = c - lo < 0 ? 0 : c - lo; j <= c + hi && j < C; ++j)
      for (int64_t i = 0; i < B; ++i) acc[i] += static_cast<double>(x[j * st + i]) * static_cast<double>(x[j * st + i]);
    T* sc = scale + c * st;
    for (int64_t i = 0; i < B; ++i) sc[i] = k + an * static_cast<T>(acc[i]);
    isa_variant<VecMath<T>, I>().pow_neg(sc, pw, B, static_cast<T>(s.beta));
    for (int64_t i = 0; i < B; ++i) y[c * st + i] = x[c * st + i] * pw[i];
  }
}

// x, y, scale point at channel 0 of B consecutive positions; channel c is at
// + c * s.HW.
template <typename T, Isa I>
void lrn_forward_block(const LrnShape& s, const T* x, T* y, T* scale, int64_t B, void* scratch) {
  const int64_t C = s.C, st = s.HW;
  const int64_t lo = s.size / 2, hi = (s.size - 1) / 2;  // window of c: [c - lo, c + hi]
  double* acc = static_cast<double*>(scratch);
  double* comp = acc + B;
  T* pw = reinterpret_cast<T*>(comp + B);
  const double alpha_n = s.alpha / static_cast<double>(s.size);
  const T k = static_cast<T>(s.k), an = static_cast<T>(alpha_n);
  for (int64_t i = 0; i < B; ++i) acc[i] = comp[i] = 0;
  for (int64_t j = 0; j <= hi && j < C; ++j) {
    const T* xj = x + j * st;
    for (int64_t i = 0; i < B; ++i)
      two_sum_add(acc[i], comp[i], static_cast<double>(xj[i]) * static_cast<double>(xj[i]));
  }
  const VecMath<T>& vm = isa_variant<VecMath<T>, I>();
  for (int64_t c = 0; c < C; ++c) {
    const T* xc = x + c * st;
    T* sc = scale + c * st;
    T* yc = y + c * st;
    // The window of c + 1 gains channel c + 1 + hi and loses channel c - lo.
    const bool enters = c + 1 + hi < C, leaves = c - lo >= 0;
    const T* xa = x + (enters ? c + 1 + hi : 0) * st;
    const T* xr = x + (leaves ? c - lo : 0) * st;
    if (enters && leaves) scale_then_slide<T, true, true>(B, k, an, xa, xr, acc, comp, sc);
    else if (enters) scale_then_slide<T, true, false>(B, k, an, xa, xr, acc, comp, sc);
    else if (leaves) scale_then_slide<T, false, true>(B, k, an, xa, xr, acc, comp, sc);
    else scale_then_slide<T, false, false>(B, k, an, xa, xr, acc, comp, sc);
    vm.pow_neg(sc, pw, B, static_cast<T>(s.beta));
    for (int64_t i = 0; i < B; ++i) yc[i] = xc[i] * pw[i];
  }
  if (!sums_finite(B, acc, comp)) lrn_forward_block_direct<T, I>(s, x, y, scale, B, scratch);
}

// The rows one channel c of the backward reads: dy, x and scale^-beta at c;
// dy, y, scale at the channel entering the window (a) and the one leaving (r).
template <typename T>
struct BackwardRows {
  const T *g, *xc, *pw, *ga, *ya, *sa, *gr, *yr, *sr;
};

// dx_c = dy_c * scale_c^-beta - coef * x_c * (window sum of dy * y / scale),
// then the window slides by one channel, in one pass over the running sums.
template <typename T, bool ENTER, bool LEAVE>
void backward_then_slide(int64_t B, T coef, const BackwardRows<T>& r, double* __restrict acc,
                         double* __restrict comp, T* __restrict d) {
  for (int64_t i = 0; i < B; ++i) {
    d[i] = r.g[i] * r.pw[i] - coef * r.xc[i] * static_cast<T>(acc[i] + comp[i]);
    double sum = acc[i], cmp = comp[i];
    if (ENTER) two_sum_add(sum, cmp, static_cast<double>(r.ga[i] * r.ya[i] / r.sa[i]));
    if (LEAVE) two_sum_add(sum, cmp, -static_cast<double>(r.gr[i] * r.yr[i] / r.sr[i]));
    acc[i] = sum;
    comp[i] = cmp;
  }
}

// The backward's slow path for a block whose window sums of dy * y / scale
// were not all finite (see lrn_forward_block_direct).
template <typename T, Isa I>
void lrn_backward_block_direct(const LrnShape& s, const T* dy, const T* x, const T* y, const T* scale, T* dx,
                               int64_t B, void* scratch) {
  const int64_t C = s.C, st = s.HW, lo = s.size / 2, hi = (s.size - 1) / 2;
  double* acc = static_cast<double*>(scratch);
  T* pw = reinterpret_cast<T*>(acc + 2 * B);
  const T coef = static_cast<T>(2 * s.alpha * s.beta / static_cast<double>(s.size));
  for (int64_t c = 0; c < C; ++c) {
    for (int64_t i = 0; i < B; ++i) acc[i] = 0;
    for (int64_t j = c - hi < 0 ? 0 : c - hi; j <= c + lo && j < C; ++j)
      for (int64_t i = 0; i < B; ++i) acc[i] += static_cast<double>(dy[j * st + i] * y[j * st + i] / scale[j * st + i]);
    isa_variant<VecMath<T>, I>().pow_neg(scale + c * st, pw, B, static_cast<T>(s.beta));
    for (int64_t i = 0; i < B; ++i)
      dx[c * st + i] = dy[c * st + i] * pw[i] - coef * x[c * st + i] * static_cast<T>(acc[i]);
  }
}

template <typename T, Isa I>
void lrn_backward_block(const LrnShape& s, const T* dy, const T* x, const T* y, const T* scale, T* dx, int64_t B,
                        void* scratch) {
  const int64_t C = s.C, st = s.HW;
  // x_c gets contributions from every j whose window holds c: j in [c - hi, c + lo].
  const int64_t lo = s.size / 2, hi = (s.size - 1) / 2;
  double* acc = static_cast<double*>(scratch);
  double* comp = acc + B;
  T* pw = reinterpret_cast<T*>(comp + B);
  const T coef = static_cast<T>(2 * s.alpha * s.beta / static_cast<double>(s.size));
  for (int64_t i = 0; i < B; ++i) acc[i] = comp[i] = 0;
  // r_j = dy_j * y_j / scale_j
  for (int64_t j = 0; j <= lo && j < C; ++j) {
    const T *g = dy + j * st, *yj = y + j * st, *sj = scale + j * st;
    for (int64_t i = 0; i < B; ++i) two_sum_add(acc[i], comp[i], static_cast<double>(g[i] * yj[i] / sj[i]));
  }
  const VecMath<T>& vm = isa_variant<VecMath<T>, I>();
  for (int64_t c = 0; c < C; ++c) {
    vm.pow_neg(scale + c * st, pw, B, static_cast<T>(s.beta));
    // The window of c + 1 gains j = c + 1 + lo and loses j = c - hi.
    const bool enters = c + 1 + lo < C, leaves = c - hi >= 0;
    const int64_t ja = enters ? c + 1 + lo : 0, jr = leaves ? c - hi : 0;
    const BackwardRows<T> rows{dy + c * st, x + c * st, pw, dy + ja * st, y + ja * st, scale + ja * st,
                               dy + jr * st, y + jr * st, scale + jr * st};
    T* d = dx + c * st;
    if (enters && leaves) backward_then_slide<T, true, true>(B, coef, rows, acc, comp, d);
    else if (enters) backward_then_slide<T, true, false>(B, coef, rows, acc, comp, d);
    else if (leaves) backward_then_slide<T, false, true>(B, coef, rows, acc, comp, d);
    else backward_then_slide<T, false, false>(B, coef, rows, acc, comp, d);
  }
  if (!sums_finite(B, acc, comp)) lrn_backward_block_direct<T, I>(s, dy, x, y, scale, dx, B, scratch);
}

template <typename T, Isa I>
LrnKernels<T> make_lrn_kernels() {
  return {lrn_forward_block<T, I>, lrn_backward_block<T, I>};
}

}  // namespace
}  // namespace minifw
