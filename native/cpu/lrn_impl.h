// LRN block kernels: loops the compiler vectorizes along the contiguous
// position axis, compiled once per ISA (lrn.cpp, lrn_avx2.cpp,
// lrn_avx512.cpp), with the ISA's vecmath for scale^-beta. Anonymous
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

// x, y, scale point at channel 0 of B consecutive positions; channel c is at
// + c * s.HW.
template <typename T, const VecMath<T>& (*VM)()>
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
    for (int64_t i = 0; i < B; ++i) two_sum_add(acc[i], comp[i], static_cast<double>(xj[i]) * static_cast<double>(xj[i]));
  }
  const VecMath<T>& vm = VM();
  for (int64_t c = 0; c < C; ++c) {
    const T* xc = x + c * st;
    T* sc = scale + c * st;
    T* yc = y + c * st;
    // (a sum of squares that cancelled to a tiny negative value is 0)
    for (int64_t i = 0; i < B; ++i) {
      const T a = static_cast<T>(acc[i] + comp[i]);  // (clamped after the conversion, which vectorizes)
      sc[i] = k + an * (a > T(0) ? a : T(0));
    }
    vm.pow_neg(sc, pw, B, static_cast<T>(s.beta));
    for (int64_t i = 0; i < B; ++i) yc[i] = xc[i] * pw[i];
    if (c + 1 + hi < C) {
      const T* xa = x + (c + 1 + hi) * st;
      for (int64_t i = 0; i < B; ++i)
        two_sum_add(acc[i], comp[i], static_cast<double>(xa[i]) * static_cast<double>(xa[i]));
    }
    if (c - lo >= 0) {
      const T* xr = x + (c - lo) * st;
      for (int64_t i = 0; i < B; ++i)
        two_sum_add(acc[i], comp[i], -(static_cast<double>(xr[i]) * static_cast<double>(xr[i])));
    }
  }
}

template <typename T, const VecMath<T>& (*VM)()>
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
  const VecMath<T>& vm = VM();
  for (int64_t c = 0; c < C; ++c) {
    const T *g = dy + c * st, *xc = x + c * st;
    T* d = dx + c * st;
    vm.pow_neg(scale + c * st, pw, B, static_cast<T>(s.beta));
    for (int64_t i = 0; i < B; ++i) d[i] = g[i] * pw[i] - coef * xc[i] * static_cast<T>(acc[i] + comp[i]);
    if (c + 1 + lo < C) {
      const int64_t j = c + 1 + lo;
      const T *ga = dy + j * st, *ya = y + j * st, *sa = scale + j * st;
      for (int64_t i = 0; i < B; ++i) two_sum_add(acc[i], comp[i], static_cast<double>(ga[i] * ya[i] / sa[i]));
    }
    if (c - hi >= 0) {
      const int64_t j = c - hi;
      const T *gr = dy + j * st, *yr = y + j * st, *sr = scale + j * st;
      for (int64_t i = 0; i < B; ++i) two_sum_add(acc[i], comp[i], -static_cast<double>(gr[i] * yr[i] / sr[i]));
    }
  }
}

template <typename T, const VecMath<T>& (*VM)()>
LrnKernels<T> make_lrn_kernels() {
  return {lrn_forward_block<T, VM>, lrn_backward_block<T, VM>};
}

}  // namespace
}  // namespace minifw
