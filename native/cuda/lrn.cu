// Local response normalization across channels on the GPU, NCHW, with the
// formulas and numerics of cpu/lrn.h: one thread per (image, position) walks
// the C channels a stride of H * W apart (neighbouring threads read
// neighbouring addresses), sliding its window sum by one channel per step, so
// the cost does not grow with the window. The running sums are doubles with
// Knuth's TwoSum compensation, as on the CPU; a position whose sums end up inf
// or NaN is redone with every window summed afresh, so such a value reaches
// only the windows that hold it.
#include "common.cuh"
#include "lrn.h"

namespace minifw {
namespace MINIFW_CUDA_NS {
namespace {

// a * b rounded, never fused with the add that follows: TwoSum's error term
// is exact only for the rounded addend it is given.
__device__ __forceinline__ double product(double a, double b) {
#ifdef __CUDACC__
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

// sum + comp += t, keeping in comp what rounding dropped from sum.
__device__ __forceinline__ void two_sum_add(double& sum, double& comp, double t) {
  const double u = sum + t;
  const double t_part = u - sum;
  comp += (sum - (u - t_part)) + (t - t_part);
  sum = u;
}

__device__ __forceinline__ bool finite(double v) { return v - v == 0.0; }

// s^-beta, as vecmath's pow_neg: AlexNet's beta 0.75 by square roots.
template <typename T>
__device__ __forceinline__ T pow_neg(T s, T beta) {
  if (beta == T(0.75)) {
    const T r = sqrt(s);
    return T(1) / (r * sqrt(r));
  }
  return exp(-beta * log(s));
}

template <typename T>
__global__ void lrn_forward_kernel(LrnShape s, const T* x, T* y, T* scale) {
  const int64_t C = s.C, st = s.HW, lo = s.size / 2, hi = (s.size - 1) / 2;  // window of c: [c - lo, c + hi]
  const T k = T(s.k), an = T(s.alpha / double(s.size)), beta = T(s.beta);
  const int64_t positions = s.N * s.HW, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t p = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; p < positions; p += stride) {
    const int64_t n = p / st, base = n * C * st + (p - n * st);
    const T* xp = x + base;
    T* yp = y + base;
    T* sp = scale + base;
    double acc = 0, comp = 0;
    for (int64_t j = 0; j <= hi && j < C; ++j) {
      const double v = double(xp[j * st]);
      two_sum_add(acc, comp, product(v, v));
    }
    for (int64_t c = 0; c < C; ++c) {
      const T a = T(acc + comp);  // a sum of squares that cancelled to a tiny negative value is 0
      const T sc = k + an * (a > T(0) ? a : T(0));
      sp[c * st] = sc;
      yp[c * st] = xp[c * st] * pow_neg(sc, beta);
      // The window of c + 1 gains channel c + 1 + hi and loses channel c - lo.
      if (c + 1 + hi < C) {
        const double v = double(xp[(c + 1 + hi) * st]);
        two_sum_add(acc, comp, product(v, v));
      }
      if (c - lo >= 0) {
        const double v = double(xp[(c - lo) * st]);
        two_sum_add(acc, comp, -product(v, v));
      }
    }
    if (finite(acc + comp)) continue;
    for (int64_t c = 0; c < C; ++c) {
      double sum = 0;
      for (int64_t j = c - lo < 0 ? 0 : c - lo; j <= c + hi && j < C; ++j) {
        const double v = double(xp[j * st]);
        sum += v * v;
      }
      const T sc = k + an * T(sum);
      sp[c * st] = sc;
      yp[c * st] = xp[c * st] * pow_neg(sc, beta);
    }
  }
}

// dx_c = dy_c * scale_c^-beta - coef * x_c * (sum of dy_j * y_j / scale_j over
// j in [c - hi, c + lo], the channels whose windows hold c).
template <typename T>
__global__ void lrn_backward_kernel(LrnShape s, const T* dy, const T* x, const T* y, const T* scale, T* dx) {
  const int64_t C = s.C, st = s.HW, lo = s.size / 2, hi = (s.size - 1) / 2;
  const T coef = T(2 * s.alpha * s.beta / double(s.size)), beta = T(s.beta);
  const int64_t positions = s.N * s.HW, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t p = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; p < positions; p += stride) {
    const int64_t n = p / st, base = n * C * st + (p - n * st);
    const T *g = dy + base, *xp = x + base, *yp = y + base, *sp = scale + base;
    T* d = dx + base;
    // r_j = dy_j * y_j / scale_j, in T as on the CPU
    auto r = [&](int64_t j) { return double(g[j * st] * yp[j * st] / sp[j * st]); };
    double acc = 0, comp = 0;
    for (int64_t j = 0; j <= lo && j < C; ++j) two_sum_add(acc, comp, r(j));
    for (int64_t c = 0; c < C; ++c) {
      d[c * st] = g[c * st] * pow_neg(sp[c * st], beta) - coef * xp[c * st] * T(acc + comp);
      // The window of c + 1 gains j = c + 1 + lo and loses j = c - hi.
      if (c + 1 + lo < C) two_sum_add(acc, comp, r(c + 1 + lo));
      if (c - hi >= 0) two_sum_add(acc, comp, -r(c - hi));
    }
    if (finite(acc + comp)) continue;
    for (int64_t c = 0; c < C; ++c) {
      double sum = 0;
      for (int64_t j = c - hi < 0 ? 0 : c - hi; j <= c + lo && j < C; ++j) sum += r(j);
      d[c * st] = g[c * st] * pow_neg(sp[c * st], beta) - coef * xp[c * st] * T(sum);
    }
  }
}
}  // namespace

template <typename T>
void lrn_forward(const LrnShape& s, const T* x, T* y, T* scale, void* stream) {
  if (s.elems() == 0) return;
  launch("lrn_forward", lrn_forward_kernel<T>, elementwise_grid(s.N * s.HW), dim3(kElementwiseThreads), 0,
         static_cast<cudaStream_t>(stream), s, x, y, scale);
}

template <typename T>
void lrn_backward(const LrnShape& s, const T* dy, const T* x, const T* y, const T* scale, T* dx, void* stream) {
  if (s.elems() == 0) return;
  launch("lrn_backward", lrn_backward_kernel<T>, elementwise_grid(s.N * s.HW), dim3(kElementwiseThreads), 0,
         static_cast<cudaStream_t>(stream), s, dy, x, y, scale, dx);
}

template void lrn_forward<float>(const LrnShape&, const float*, float*, float*, void*);
template void lrn_forward<double>(const LrnShape&, const double*, double*, double*, void*);
template void lrn_backward<float>(const LrnShape&, const float*, const float*, const float*, const float*, float*,
                                  void*);
template void lrn_backward<double>(const LrnShape&, const double*, const double*, const double*, const double*,
                                   double*, void*);
}  // namespace MINIFW_CUDA_NS
}  // namespace minifw
