// The generic vecmath: libm one element at a time for the transcendental
// functions, loops the compiler vectorizes for max, scale and softmax_grad.
#include "vecmath.h"

#include <cmath>

namespace minifw {
namespace {

template <typename T>
struct Portable {
  static void exp(const T* x, T* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = std::exp(x[i]);
  }
  static T exp_shift_sum(const T* x, T shift, T* y, int64_t n) {
    T sum = 0;
    for (int64_t i = 0; i < n; ++i) {
      y[i] = std::exp(x[i] - shift);
      sum += y[i];
    }
    return sum;
  }
  static void exp_sub(const T* x, const T* m, T* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = std::exp(x[i] - m[i]);
  }
  static void log(const T* x, T* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = std::log(x[i]);
  }
  static void sigmoid(const T* x, T* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = T(1) / (T(1) + std::exp(-x[i]));
  }
  static void tanh(const T* x, T* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = std::tanh(x[i]);
  }
  static void elu(const T* x, T* y, int64_t n, T alpha) {
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0 ? x[i] : alpha * std::expm1(x[i]);
  }
  static void pow_neg(const T* s, T* y, int64_t n, T beta) {
    if (beta == T(0.75)) {
      for (int64_t i = 0; i < n; ++i) {
        const T r = std::sqrt(s[i]);
        y[i] = T(1) / (r * std::sqrt(r));
      }
    } else {
      for (int64_t i = 0; i < n; ++i) y[i] = std::pow(s[i], -beta);
    }
  }
  // In kLanes independent lanes, written as a select on both loaded values,
  // so the compiler vectorizes it (a std::max reduction stays a scalar chain).
  static T max(const T* x, int64_t n) {
    constexpr int64_t kLanes = 16;
    T m = x[0];
    int64_t i = 0;
    if (n >= 2 * kLanes) {
      T lane[kLanes];
      for (int64_t j = 0; j < kLanes; ++j) lane[j] = x[j];
      for (i = kLanes; i + kLanes <= n; i += kLanes)
        for (int64_t j = 0; j < kLanes; ++j) {
          const T v = x[i + j];
          lane[j] = lane[j] > v ? lane[j] : v;
        }
      for (int64_t j = 0; j < kLanes; ++j) m = lane[j] > m ? lane[j] : m;
    }
    for (; i < n; ++i) m = x[i] > m ? x[i] : m;
    return m;
  }
  static void scale(const T* x, T* y, int64_t n, T a) {
    for (int64_t i = 0; i < n; ++i) y[i] = a * x[i];
  }
  // The dot product in kLanes independent sums, so it vectorizes.
  static void softmax_grad(const T* g, const T* p, T* d, int64_t n) {
    constexpr int64_t kLanes = 16;
    T lane[kLanes] = {};
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes)
      for (int64_t j = 0; j < kLanes; ++j) lane[j] += g[i + j] * p[i + j];
    T dot = 0;
    for (; i < n; ++i) dot += g[i] * p[i];
    for (int64_t j = 0; j < kLanes; ++j) dot += lane[j];
    for (i = 0; i < n; ++i) d[i] = p[i] * (g[i] - dot);
  }
  static VecMath<T> table() {
    return {exp, exp_shift_sum, exp_sub, log, sigmoid, tanh, elu, pow_neg, max, scale, softmax_grad, "generic"};
  }
};
}  // namespace

MINIFW_ISA_VARIANT(VecMath<float>, generic, Portable<float>::table())
MINIFW_ISA_VARIANT(VecMath<double>, generic, Portable<double>::table())
}  // namespace minifw
