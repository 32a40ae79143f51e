// AVX-512 versions of the vecmath functions (compiled with -mavx512f/bw/dq/vl).
// scalef, getexp and getmant do the exponent arithmetic, subnormals included.
#include <immintrin.h>

#include "vecmath.h"
#include "vecmath_impl.h"

namespace minifw {
namespace {

struct F32x16 {
  using T = float;
  using reg = __m512;
  using mask = __mmask16;
  static constexpr int lanes = 16;
  static mask tail_mask(int64_t n) { return static_cast<mask>((1u << n) - 1u); }
  static reg set1(T v) { return _mm512_set1_ps(v); }
  static reg load(const T* p) { return _mm512_loadu_ps(p); }
  static void store(T* p, reg v) { _mm512_storeu_ps(p, v); }
  static reg load_n(const T* p, int64_t n) { return _mm512_maskz_loadu_ps(tail_mask(n), p); }
  static void store_n(T* p, reg v, int64_t n) { _mm512_mask_storeu_ps(p, tail_mask(n), v); }
  static reg add(reg a, reg b) { return _mm512_add_ps(a, b); }
  static reg sub(reg a, reg b) { return _mm512_sub_ps(a, b); }
  static reg mul(reg a, reg b) { return _mm512_mul_ps(a, b); }
  static reg div(reg a, reg b) { return _mm512_div_ps(a, b); }
  static reg fma(reg a, reg b, reg c) { return _mm512_fmadd_ps(a, b, c); }
  static reg fnma(reg a, reg b, reg c) { return _mm512_fnmadd_ps(a, b, c); }
  static reg sqrt(reg a) { return _mm512_sqrt_ps(a); }
  static reg min(reg a, reg b) { return _mm512_min_ps(a, b); }
  static reg max(reg a, reg b) { return _mm512_max_ps(a, b); }
  static reg round(reg a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static reg abs(reg a) { return _mm512_abs_ps(a); }
  static reg or_sign(reg a, reg x) { return _mm512_or_ps(a, _mm512_and_ps(x, _mm512_set1_ps(-0.0f))); }
  static mask gt(reg a, reg b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ); }
  static mask lt(reg a, reg b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
  static mask eq(reg a, reg b) { return _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ); }
  static mask isnan(reg a) { return _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q); }
  static reg blend(mask m, reg a, reg b) { return _mm512_mask_blend_ps(m, b, a); }
  static reg pow2(reg n) { return _mm512_scalef_ps(_mm512_set1_ps(1.0f), n); }
  static reg scale2n(reg v, reg n) { return _mm512_scalef_ps(v, n); }
  static void split(reg x, reg& m, reg& e) {
    e = _mm512_getexp_ps(x);
    m = _mm512_getmant_ps(x, _MM_MANT_NORM_1_2, _MM_MANT_SIGN_zero);
  }
  static T hsum(reg v) { return _mm512_reduce_add_ps(v); }
};

struct F64x8 {
  using T = double;
  using reg = __m512d;
  using mask = __mmask8;
  static constexpr int lanes = 8;
  static mask tail_mask(int64_t n) { return static_cast<mask>((1u << n) - 1u); }
  static reg set1(T v) { return _mm512_set1_pd(v); }
  static reg load(const T* p) { return _mm512_loadu_pd(p); }
  static void store(T* p, reg v) { _mm512_storeu_pd(p, v); }
  static reg load_n(const T* p, int64_t n) { return _mm512_maskz_loadu_pd(tail_mask(n), p); }
  static void store_n(T* p, reg v, int64_t n) { _mm512_mask_storeu_pd(p, tail_mask(n), v); }
  static reg add(reg a, reg b) { return _mm512_add_pd(a, b); }
  static reg sub(reg a, reg b) { return _mm512_sub_pd(a, b); }
  static reg mul(reg a, reg b) { return _mm512_mul_pd(a, b); }
  static reg div(reg a, reg b) { return _mm512_div_pd(a, b); }
  static reg fma(reg a, reg b, reg c) { return _mm512_fmadd_pd(a, b, c); }
  static reg fnma(reg a, reg b, reg c) { return _mm512_fnmadd_pd(a, b, c); }
  static reg sqrt(reg a) { return _mm512_sqrt_pd(a); }
  static reg min(reg a, reg b) { return _mm512_min_pd(a, b); }
  static reg max(reg a, reg b) { return _mm512_max_pd(a, b); }
  static reg round(reg a) { return _mm512_roundscale_pd(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static reg abs(reg a) { return _mm512_abs_pd(a); }
  static reg or_sign(reg a, reg x) { return _mm512_or_pd(a, _mm512_and_pd(x, _mm512_set1_pd(-0.0))); }
  static mask gt(reg a, reg b) { return _mm512_cmp_pd_mask(a, b, _CMP_GT_OQ); }
  static mask lt(reg a, reg b) { return _mm512_cmp_pd_mask(a, b, _CMP_LT_OQ); }
  static mask eq(reg a, reg b) { return _mm512_cmp_pd_mask(a, b, _CMP_EQ_OQ); }
  static mask isnan(reg a) { return _mm512_cmp_pd_mask(a, a, _CMP_UNORD_Q); }
  static reg blend(mask m, reg a, reg b) { return _mm512_mask_blend_pd(m, b, a); }
  static reg pow2(reg n) { return _mm512_scalef_pd(_mm512_set1_pd(1.0), n); }
  static reg scale2n(reg v, reg n) { return _mm512_scalef_pd(v, n); }
  static void split(reg x, reg& m, reg& e) {
    e = _mm512_getexp_pd(x);
    m = _mm512_getmant_pd(x, _MM_MANT_NORM_1_2, _MM_MANT_SIGN_zero);
  }
  static T hsum(reg v) { return _mm512_reduce_add_pd(v); }
};

}  // namespace

const VecMath<float>& vecmath_avx512_f32() {
  static const VecMath<float> table = make_vecmath<F32x16>("avx512");
  return table;
}
const VecMath<double>& vecmath_avx512_f64() {
  static const VecMath<double> table = make_vecmath<F64x8>("avx512");
  return table;
}
}  // namespace minifw
