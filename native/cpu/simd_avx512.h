// SIMD traits for AVX-512 (F, BW, DQ, VL): the vector operations that the
// templated kernels (vecmath_impl.h, pooling_impl.h, gemm_microkernel.h) are
// written in. Include only from files compiled with AVX-512 flags
// (*_avx512.cpp); everything here is in an anonymous namespace so each
// translation unit keeps its own copy. scalef, getexp and getmant do the
// exponent arithmetic, subnormals included.
#pragma once
#include <immintrin.h>

#include <cfloat>
#include <cstdint>

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
  static void stream(T* p, reg v) { _mm512_stream_ps(p, v); }  // p 64-byte aligned
  static reg zero() { return _mm512_setzero_ps(); }
  static reg broadcast(const T* p) { return _mm512_set1_ps(*p); }
  static void prefetch(const T* p) { _mm_prefetch(reinterpret_cast<const char*>(p), _MM_HINT_T0); }
  static reg load_n(const T* p, int64_t n) { return _mm512_maskz_loadu_ps(tail_mask(n), p); }
  static void store_n(T* p, reg v, int64_t n) { _mm512_mask_storeu_ps(p, tail_mask(n), v); }
  static reg add(reg a, reg b) { return _mm512_add_ps(a, b); }
  static reg sub(reg a, reg b) { return _mm512_sub_ps(a, b); }
  static reg mul(reg a, reg b) { return _mm512_mul_ps(a, b); }
  static reg div(reg a, reg b) { return _mm512_div_ps(a, b); }
  static reg fma(reg a, reg b, reg c) { return _mm512_fmadd_ps(a, b, c); }
  static reg fnma(reg a, reg b, reg c) { return _mm512_fnmadd_ps(a, b, c); }
  static reg sqrt(reg a) { return _mm512_sqrt_ps(a); }
  static reg rsqrt(reg a) { return _mm512_rsqrt14_ps(a); }  // relative error < 2^-14
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
  // ---- masks and 32-bit integer lanes (pooling indices) ----
  using ireg = __m512i;
  static mask mor(mask a, mask b) { return static_cast<mask>(a | b); }
  static bool any(mask m) { return m != 0; }
  static mask mandnot(mask a, mask b) { return static_cast<mask>(~a & b); }
  static ireg iset1(int32_t v) { return _mm512_set1_epi32(v); }
  static ireg iadd(ireg a, ireg b) { return _mm512_add_epi32(a, b); }
  static ireg iota_times(int32_t step) {
    return _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                              _mm512_set1_epi32(step));
  }
  static ireg iblend(mask m, ireg a, ireg b) { return _mm512_mask_blend_epi32(m, b, a); }
  static __mmask8 mask8(int64_t n) {
    return n >= 8 ? __mmask8(0xff) : n <= 0 ? __mmask8(0) : static_cast<__mmask8>((1u << n) - 1u);
  }
  static void store_index64_n(int64_t* p, ireg v, int64_t n) {
    _mm512_mask_storeu_epi64(p, mask8(n), _mm512_cvtepi32_epi64(_mm512_castsi512_si256(v)));
    _mm512_mask_storeu_epi64(p + 8, mask8(n - 8), _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(v, 1)));
  }
  static mask safe_mask(int64_t n) { return n >= 16 ? mask(0xffff) : n <= 0 ? mask(0) : tail_mask(n); }
  // Lane i (< n) gets p[2 i]; nothing past p[2 n - 2] is read.
  static reg load_stride2_n(const T* p, int64_t n) {
    const int64_t count = 2 * n - 1;
    const reg a = _mm512_maskz_loadu_ps(safe_mask(count), p);
    const reg b = _mm512_maskz_loadu_ps(safe_mask(count - 16), p + 16);
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    return _mm512_permutex2var_ps(a, even, b);
  }
  static reg gather_n(const T* p, ireg offsets, int64_t n) {
    return _mm512_mask_i32gather_ps(_mm512_setzero_ps(), safe_mask(n), offsets, p, 4);
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
  static void stream(T* p, reg v) { _mm512_stream_pd(p, v); }  // p 64-byte aligned
  static reg zero() { return _mm512_setzero_pd(); }
  static reg broadcast(const T* p) { return _mm512_set1_pd(*p); }
  static void prefetch(const T* p) { _mm_prefetch(reinterpret_cast<const char*>(p), _MM_HINT_T0); }
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
}  // namespace minifw
