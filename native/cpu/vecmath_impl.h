// The vectorized exp / log family, written once over a SIMD traits struct V
// and instantiated in vecmath_avx2.cpp and vecmath_avx512.cpp. Include only
// from those files: everything here is in an anonymous namespace so that each
// ISA's copy stays in its own translation unit.
//
// V provides (T = float or double, reg = a vector of V::lanes values):
//   set1 load store load_n store_n (the first n < lanes lanes; others read as 0)
//   add sub mul div fma(a,b,c)=a*b+c fnma(a,b,c)=c-a*b sqrt
//   min(a,b), max(a,b): b when either is NaN (as the SSE instructions), so
//     min(hi, x) clamps x and lets a NaN through
//   round (to nearest), abs, or_sign(a, x) = a with x's sign bit or-ed in
//   gt lt eq isnan -> mask; blend(mask, a, b) = mask ? a : b; tail_mask(n)
//   pow2(n) = 2^n for integral n within the normal exponent range
//   scale2n(v, n) = v * 2^n for integral n of any size (overflow -> inf, underflow -> 0)
//   split(x, m, e): x > 0 normal -> x = m * 2^e with m in [1, 2)
//   hsum(reg)
// and, for float only, rsqrt (an estimate of 1 / sqrt, 12 bits or better) and
// any(mask).
#pragma once
#include <cfloat>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace minifw {
namespace {

// Constants per precision. The Taylor degrees are the smallest that keep the
// truncation error under half an ulp on the reduced ranges below.
template <typename T> struct MathConst;
template <> struct MathConst<float> {
  static constexpr float log2e = 1.44269504088896341f;
  // ln 2 split so that n * ln2_hi is exact for every |n| the clamps allow.
  static constexpr float ln2_hi = 0.693115234375f;
  static constexpr float ln2_lo = 3.19461849453094e-05f;
  static constexpr float exp_lo = -104.0f, exp_hi = 89.0f;  // exp underflows to 0 / overflows to inf
  static constexpr int expm1_degree = 7;    // |r| <= ln2 / 2: r^8/8! < 2^-25 relative
  static constexpr int atanh_terms = 5;     // |s| <= 0.1716: s^10/11 < 2^-25
};
template <> struct MathConst<double> {
  static constexpr double log2e = 1.44269504088896341;
  static constexpr double ln2_hi = 0.6931471805598903;
  static constexpr double ln2_lo = 5.497923018708371e-14;
  static constexpr double exp_lo = -746.0, exp_hi = 710.0;
  static constexpr int expm1_degree = 13;
  static constexpr int atanh_terms = 10;
};

constexpr double inv_factorial(int k) {
  double f = 1;
  for (int i = 2; i <= k; ++i) f *= i;
  return 1 / f;
}

// Range reduction shared by exp and expm1: x = n * ln2 + r, |r| <= ln2 / 2,
// and q = expm1(r) = r + r^2/2! + ... by Horner's rule (the Taylor
// coefficients are exact reciprocals of factorials, nothing to tune).
template <class V>
inline void expm1_reduce(typename V::reg x, typename V::reg& n, typename V::reg& q) {
  using T = typename V::T;
  using C = MathConst<T>;
  n = V::round(V::mul(x, V::set1(C::log2e)));
  typename V::reg r = V::fnma(n, V::set1(C::ln2_hi), x);
  r = V::fnma(n, V::set1(C::ln2_lo), r);
  // p = 1/2! + r/3! + ... + r^(d-2)/d!, then q = r + r^2 * p
  typename V::reg p = V::set1(T(inv_factorial(C::expm1_degree)));
  for (int k = C::expm1_degree - 1; k >= 2; --k) p = V::fma(p, r, V::set1(T(inv_factorial(k))));
  q = V::fma(V::mul(r, r), p, r);
}

template <class V>
inline typename V::reg vexp(typename V::reg x) {
  using C = MathConst<typename V::T>;
  x = V::min(V::set1(C::exp_hi), x);  // NaN passes through both clamps
  x = V::max(V::set1(C::exp_lo), x);
  typename V::reg n, q;
  expm1_reduce<V>(x, n, q);
  return V::scale2n(V::add(q, V::set1(1)), n);
}

// expm1 for x in [-60, 40] (the callers clamp): 2^n * q + (2^n - 1) keeps full
// relative accuracy near 0, where exp(x) - 1 would cancel.
template <class V>
inline typename V::reg vexpm1_clamped(typename V::reg x) {
  x = V::min(V::set1(40), x);
  x = V::max(V::set1(-60), x);
  typename V::reg n, q;
  expm1_reduce<V>(x, n, q);
  const typename V::reg p = V::pow2(n);
  return V::add(V::mul(p, q), V::sub(p, V::set1(1)));
}

// log x = e * ln2 + 2 atanh(s), s = (m - 1) / (m + 1), m in [sqrt(1/2), sqrt(2)).
template <class V>
inline typename V::reg vlog(typename V::reg x) {
  using T = typename V::T;
  using C = MathConst<T>;
  using reg = typename V::reg;
  reg m, e;
  V::split(x, m, e);
  const auto big = V::gt(m, V::set1(T(1.41421356237309505)));
  m = V::blend(big, V::mul(m, V::set1(T(0.5))), m);
  e = V::blend(big, V::add(e, V::set1(1)), e);
  const reg s = V::div(V::sub(m, V::set1(1)), V::add(m, V::set1(1)));
  const reg s2 = V::mul(s, s);
  reg p = V::set1(T(1) / T(2 * C::atanh_terms - 1));
  for (int k = C::atanh_terms - 2; k >= 0; --k) p = V::fma(p, s2, V::set1(T(1) / T(2 * k + 1)));
  const reg two_s = V::add(s, s);
  reg r = V::fma(e, V::set1(C::ln2_lo), V::mul(two_s, p));
  r = V::fma(e, V::set1(C::ln2_hi), r);
  // log's special values: 0 -> -inf, negative -> nan, inf -> inf, nan -> nan.
  const T inf = std::numeric_limits<T>::infinity();
  r = V::blend(V::eq(x, V::set1(0)), V::set1(-inf), r);
  r = V::blend(V::lt(x, V::set1(0)), V::set1(std::numeric_limits<T>::quiet_NaN()), r);
  r = V::blend(V::eq(x, V::set1(inf)), x, r);
  return V::blend(V::isnan(x), x, r);
}

template <class V>
inline typename V::reg vsigmoid(typename V::reg x) {
  const typename V::reg one = V::set1(1);
  return V::div(one, V::add(one, vexp<V>(V::sub(V::set1(0), x))));
}

// tanh |x| = e / (e + 2) with e = expm1(2 |x|): no cancellation near 0, and
// 2|x| >= 40 already rounds to 1 in double.
template <class V>
inline typename V::reg vtanh(typename V::reg x) {
  const typename V::reg a = V::abs(x);
  const typename V::reg e = vexpm1_clamped<V>(V::add(a, a));
  return V::or_sign(V::div(e, V::add(e, V::set1(2))), x);
}

template <class V>
inline typename V::reg velu(typename V::reg x, typename V::reg alpha) {
  return V::blend(V::gt(x, V::set1(0)), x, V::mul(alpha, vexpm1_clamped<V>(x)));
}

// 1 / sqrt(s) for normal s > 0: the hardware estimate and one Newton step,
// y + y / 2 * (1 - s y^2), which squares the estimate's relative error
// (2^-12 or 2^-14) to below an ulp.
template <class V>
inline typename V::reg vrsqrt_refined(typename V::reg s) {
  const typename V::reg y = V::rsqrt(s);
  return V::fma(V::mul(y, V::set1(0.5f)), V::fnma(V::mul(s, y), y, V::set1(1)), y);
}

// s^-beta. beta = 0.75 (AlexNet's LRN) is 1 / (sqrt(s) * sqrt(sqrt(s))):
// correctly rounded square roots beat exp(-beta * log s) in speed and accuracy.
// In float it is cheaper still as s^-1/2 * (s * s^-1/2)^-1/2, two refined
// reciprocal square roots (a few ulp) in place of two square roots and a
// division; a vector holding any value outside the normal range (0,
// subnormals, inf, NaN, negatives) takes the square-root path instead.
template <class V>
inline typename V::reg vpow_neg(typename V::reg s, typename V::T beta) {
  using T = typename V::T;
  if (beta == T(0.75)) {
    if constexpr (std::is_same<T, float>::value) {
      const auto outside = V::mor(V::mor(V::lt(s, V::set1(FLT_MIN)), V::gt(s, V::set1(FLT_MAX))), V::isnan(s));
      if (!V::any(outside)) {
        const typename V::reg r1 = vrsqrt_refined<V>(s);
        return V::mul(r1, vrsqrt_refined<V>(V::mul(s, r1)));
      }
    }
    const typename V::reg r = V::sqrt(s);
    return V::div(V::set1(1), V::mul(r, V::sqrt(r)));
  }
  return vexp<V>(V::mul(V::set1(-beta), vlog<V>(s)));
}

// ---- array loops: full vectors, then one partial vector for the tail ----------

template <class V, class F>
inline void map_array(const typename V::T* x, typename V::T* y, int64_t n, F f) {
  int64_t i = 0;
  for (; i + V::lanes <= n; i += V::lanes) V::store(y + i, f(V::load(x + i)));
  if (i < n) V::store_n(y + i, f(V::load_n(x + i, n - i)), n - i);
}

template <class V>
void exp_array(const typename V::T* x, typename V::T* y, int64_t n) {
  map_array<V>(x, y, n, [](typename V::reg v) { return vexp<V>(v); });
}

template <class V>
typename V::T exp_shift_sum_array(const typename V::T* x, typename V::T shift, typename V::T* y,
                                  int64_t n) {
  using reg = typename V::reg;
  const reg sh = V::set1(shift);
  reg acc0 = V::set1(0), acc1 = V::set1(0);  // two chains hide the add latency
  int64_t i = 0;
  for (; i + 2 * V::lanes <= n; i += 2 * V::lanes) {
    const reg a = vexp<V>(V::sub(V::load(x + i), sh));
    const reg b = vexp<V>(V::sub(V::load(x + i + V::lanes), sh));
    V::store(y + i, a);
    V::store(y + i + V::lanes, b);
    acc0 = V::add(acc0, a);
    acc1 = V::add(acc1, b);
  }
  for (; i < n; i += V::lanes) {
    const int64_t len = n - i < V::lanes ? n - i : V::lanes;
    reg a = vexp<V>(V::sub(V::load_n(x + i, len), sh));
    a = V::blend(V::tail_mask(len), a, V::set1(0));
    V::store_n(y + i, a, len);
    acc0 = V::add(acc0, a);
  }
  return V::hsum(V::add(acc0, acc1));
}

template <class V>
void exp_sub_array(const typename V::T* x, const typename V::T* m, typename V::T* y, int64_t n) {
  int64_t i = 0;
  for (; i + V::lanes <= n; i += V::lanes)
    V::store(y + i, vexp<V>(V::sub(V::load(x + i), V::load(m + i))));
  if (i < n)
    V::store_n(y + i, vexp<V>(V::sub(V::load_n(x + i, n - i), V::load_n(m + i, n - i))), n - i);
}

template <class V>
void log_array(const typename V::T* x, typename V::T* y, int64_t n) {
  map_array<V>(x, y, n, [](typename V::reg v) { return vlog<V>(v); });
}

template <class V>
void sigmoid_array(const typename V::T* x, typename V::T* y, int64_t n) {
  map_array<V>(x, y, n, [](typename V::reg v) { return vsigmoid<V>(v); });
}

template <class V>
void tanh_array(const typename V::T* x, typename V::T* y, int64_t n) {
  map_array<V>(x, y, n, [](typename V::reg v) { return vtanh<V>(v); });
}

template <class V>
void elu_array(const typename V::T* x, typename V::T* y, int64_t n, typename V::T alpha) {
  const typename V::reg a = V::set1(alpha);
  map_array<V>(x, y, n, [a](typename V::reg v) { return velu<V>(v, a); });
}

template <class V>
void pow_neg_array(const typename V::T* s, typename V::T* y, int64_t n, typename V::T beta) {
  map_array<V>(s, y, n, [beta](typename V::reg v) { return vpow_neg<V>(v, beta); });
}

template <class V>
typename V::T max_array(const typename V::T* x, int64_t n) {
  using reg = typename V::reg;
  reg m0 = V::set1(x[0]), m1 = m0;  // two chains hide the max latency
  int64_t i = 0;
  for (; i + 2 * V::lanes <= n; i += 2 * V::lanes) {
    m0 = V::max(V::load(x + i), m0);
    m1 = V::max(V::load(x + i + V::lanes), m1);
  }
  for (; i < n; i += V::lanes) {
    const int64_t len = n - i < V::lanes ? n - i : V::lanes;
    m0 = V::max(V::blend(V::tail_mask(len), V::load_n(x + i, len), m0), m0);  // lanes past n keep m0
  }
  alignas(64) typename V::T lane[V::lanes];
  V::store(lane, V::max(m0, m1));
  typename V::T m = lane[0];
  for (int j = 1; j < V::lanes; ++j) m = lane[j] > m ? lane[j] : m;
  return m;
}

template <class V>
void scale_array(const typename V::T* x, typename V::T* y, int64_t n, typename V::T a) {
  const typename V::reg av = V::set1(a);
  map_array<V>(x, y, n, [av](typename V::reg v) { return V::mul(v, av); });
}

// The softmax backward of one row: a dot product in two chains (masked loads
// zero the lanes past n), then one pass for dx. dx may be dy or y.
template <class V>
void softmax_grad_array(const typename V::T* g, const typename V::T* p, typename V::T* d, int64_t n) {
  using reg = typename V::reg;
  reg acc0 = V::set1(0), acc1 = V::set1(0);
  int64_t i = 0;
  for (; i + 2 * V::lanes <= n; i += 2 * V::lanes) {
    acc0 = V::fma(V::load(g + i), V::load(p + i), acc0);
    acc1 = V::fma(V::load(g + i + V::lanes), V::load(p + i + V::lanes), acc1);
  }
  for (; i < n; i += V::lanes) {
    const int64_t len = n - i < V::lanes ? n - i : V::lanes;
    acc0 = V::fma(V::load_n(g + i, len), V::load_n(p + i, len), acc0);
  }
  const reg dot = V::set1(V::hsum(V::add(acc0, acc1)));
  for (i = 0; i + V::lanes <= n; i += V::lanes)
    V::store(d + i, V::mul(V::load(p + i), V::sub(V::load(g + i), dot)));
  if (i < n) V::store_n(d + i, V::mul(V::load_n(p + i, n - i), V::sub(V::load_n(g + i, n - i), dot)), n - i);
}

template <class V>
VecMath<typename V::T> make_vecmath(const char* name) {
  return {exp_array<V>,  exp_shift_sum_array<V>, exp_sub_array<V>, log_array<V>,   sigmoid_array<V>,
          tanh_array<V>, elu_array<V>,           pow_neg_array<V>, max_array<V>,   scale_array<V>,
          softmax_grad_array<V>, name};
}

}  // namespace
}  // namespace minifw
