// SIMD traits for AVX2 + FMA: the vector operations that the templated
// kernels (vecmath_impl.h, pooling_impl.h, gemm_microkernel.h) are written
// in. Include only from files compiled with AVX2 flags (*_avx2.cpp);
// everything here is in an anonymous namespace so each translation unit keeps
// its own copy.
#pragma once
#include <immintrin.h>

#include <cfloat>
#include <cstdint>

namespace minifw {
namespace {

struct F32x8 {
  using T = float;
  using reg = __m256;
  using mask = __m256;
  static constexpr int lanes = 8;
  static __m256i lanes_below(int64_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static reg set1(T v) { return _mm256_set1_ps(v); }
  static reg load(const T* p) { return _mm256_loadu_ps(p); }
  static void store(T* p, reg v) { _mm256_storeu_ps(p, v); }
  static void stream(T* p, reg v) { _mm256_stream_ps(p, v); }  // p 32-byte aligned
  static reg zero() { return _mm256_setzero_ps(); }
  static reg broadcast(const T* p) { return _mm256_broadcast_ss(p); }
  static void prefetch(const T* p) { _mm_prefetch(reinterpret_cast<const char*>(p), _MM_HINT_T0); }
  static reg load_n(const T* p, int64_t n) { return _mm256_maskload_ps(p, lanes_below(n)); }
  static void store_n(T* p, reg v, int64_t n) { _mm256_maskstore_ps(p, lanes_below(n), v); }
  static mask tail_mask(int64_t n) { return _mm256_castsi256_ps(lanes_below(n)); }
  static reg add(reg a, reg b) { return _mm256_add_ps(a, b); }
  static reg sub(reg a, reg b) { return _mm256_sub_ps(a, b); }
  static reg mul(reg a, reg b) { return _mm256_mul_ps(a, b); }
  static reg div(reg a, reg b) { return _mm256_div_ps(a, b); }
  static reg fma(reg a, reg b, reg c) { return _mm256_fmadd_ps(a, b, c); }
  static reg fnma(reg a, reg b, reg c) { return _mm256_fnmadd_ps(a, b, c); }
  static reg sqrt(reg a) { return _mm256_sqrt_ps(a); }
  static reg rsqrt(reg a) { return _mm256_rsqrt_ps(a); }  // relative error < 1.5 * 2^-12
  static reg min(reg a, reg b) { return _mm256_min_ps(a, b); }
  static reg max(reg a, reg b) { return _mm256_max_ps(a, b); }
  static reg round(reg a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static reg abs(reg a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
  static reg or_sign(reg a, reg x) { return _mm256_or_ps(a, _mm256_and_ps(x, _mm256_set1_ps(-0.0f))); }
  static mask gt(reg a, reg b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
  static mask lt(reg a, reg b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
  static mask eq(reg a, reg b) { return _mm256_cmp_ps(a, b, _CMP_EQ_OQ); }
  static mask isnan(reg a) { return _mm256_cmp_ps(a, a, _CMP_UNORD_Q); }
  static reg blend(mask m, reg a, reg b) { return _mm256_blendv_ps(b, a, m); }
  static reg pow2(reg n) {
    const __m256i e = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
    return _mm256_castsi256_ps(_mm256_slli_epi32(e, 23));
  }
  // Two factors, each within the normal range, reach 2^-150 .. 2^128.
  static reg scale2n(reg v, reg n) {
    const reg n1 = _mm256_floor_ps(_mm256_mul_ps(n, _mm256_set1_ps(0.5f)));
    return mul(mul(v, pow2(n1)), pow2(sub(n, n1)));
  }
  static void split(reg x, reg& m, reg& e) {
    const mask tiny = lt(x, set1(FLT_MIN));  // subnormal: scale by 2^24 first
    x = blend(tiny, mul(x, set1(16777216.0f)), x);
    const __m256i bits = _mm256_castps_si256(x);
    e = _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_srli_epi32(bits, 23), _mm256_set1_epi32(127)));
    e = blend(tiny, sub(e, set1(24.0f)), e);
    m = _mm256_castsi256_ps(_mm256_or_si256(_mm256_and_si256(bits, _mm256_set1_epi32(0x007fffff)),
                                            _mm256_set1_epi32(0x3f800000)));
  }
  // ---- masks and 32-bit integer lanes (pooling indices) ----
  using ireg = __m256i;
  static mask mor(mask a, mask b) { return _mm256_or_ps(a, b); }
  static bool any(mask m) { return _mm256_movemask_ps(m) != 0; }
  static mask mandnot(mask a, mask b) { return _mm256_andnot_ps(a, b); }  // ~a & b
  static ireg iset1(int32_t v) { return _mm256_set1_epi32(v); }
  static ireg iadd(ireg a, ireg b) { return _mm256_add_epi32(a, b); }
  static ireg iota_times(int32_t step) {
    return _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(step));
  }
  static ireg iblend(mask m, ireg a, ireg b) {
    return _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(b), _mm256_castsi256_ps(a), m));
  }
  // The first n lanes, widened to int64.
  static void store_index64_n(int64_t* p, ireg v, int64_t n) {
    const __m256i lo = _mm256_cvtepi32_epi64(_mm256_castsi256_si128(v));
    const __m256i hi = _mm256_cvtepi32_epi64(_mm256_extracti128_si256(v, 1));
    const __m256i first4 = _mm256_setr_epi64x(0, 1, 2, 3);
    _mm256_maskstore_epi64(reinterpret_cast<long long*>(p), _mm256_cmpgt_epi64(_mm256_set1_epi64x(n), first4), lo);
    _mm256_maskstore_epi64(reinterpret_cast<long long*>(p + 4), _mm256_cmpgt_epi64(_mm256_set1_epi64x(n - 4), first4),
                           hi);
  }
  // Lane i (< n) gets p[2 i]; nothing past p[2 n - 2] is read.
  static reg load_stride2_n(const T* p, int64_t n) {
    const int64_t count = 2 * n - 1;
    const reg a = count >= 8 ? load(p) : load_n(p, count);
    const reg b = load_n(p + 8, count - 8);
    const __m256 even = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));  // a0 a2 b0 b2 | a4 a6 b4 b6
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(even), _MM_SHUFFLE(3, 1, 2, 0)));
  }
  static reg gather_n(const T* p, ireg offsets, int64_t n) {
    return _mm256_mask_i32gather_ps(_mm256_setzero_ps(), p, offsets, tail_mask(n), 4);
  }
  static T hsum(reg v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
};

struct F64x4 {
  using T = double;
  using reg = __m256d;
  using mask = __m256d;
  static constexpr int lanes = 4;
  static __m256i lanes_below(int64_t n) {
    return _mm256_cmpgt_epi64(_mm256_set1_epi64x(n), _mm256_setr_epi64x(0, 1, 2, 3));
  }
  static reg set1(T v) { return _mm256_set1_pd(v); }
  static reg load(const T* p) { return _mm256_loadu_pd(p); }
  static void store(T* p, reg v) { _mm256_storeu_pd(p, v); }
  static void stream(T* p, reg v) { _mm256_stream_pd(p, v); }  // p 32-byte aligned
  static reg zero() { return _mm256_setzero_pd(); }
  static reg broadcast(const T* p) { return _mm256_broadcast_sd(p); }
  static void prefetch(const T* p) { _mm_prefetch(reinterpret_cast<const char*>(p), _MM_HINT_T0); }
  static reg load_n(const T* p, int64_t n) { return _mm256_maskload_pd(p, lanes_below(n)); }
  static void store_n(T* p, reg v, int64_t n) { _mm256_maskstore_pd(p, lanes_below(n), v); }
  static mask tail_mask(int64_t n) { return _mm256_castsi256_pd(lanes_below(n)); }
  static reg add(reg a, reg b) { return _mm256_add_pd(a, b); }
  static reg sub(reg a, reg b) { return _mm256_sub_pd(a, b); }
  static reg mul(reg a, reg b) { return _mm256_mul_pd(a, b); }
  static reg div(reg a, reg b) { return _mm256_div_pd(a, b); }
  static reg fma(reg a, reg b, reg c) { return _mm256_fmadd_pd(a, b, c); }
  static reg fnma(reg a, reg b, reg c) { return _mm256_fnmadd_pd(a, b, c); }
  static reg sqrt(reg a) { return _mm256_sqrt_pd(a); }
  static reg min(reg a, reg b) { return _mm256_min_pd(a, b); }
  static reg max(reg a, reg b) { return _mm256_max_pd(a, b); }
  static reg round(reg a) { return _mm256_round_pd(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static reg abs(reg a) { return _mm256_andnot_pd(_mm256_set1_pd(-0.0), a); }
  static reg or_sign(reg a, reg x) { return _mm256_or_pd(a, _mm256_and_pd(x, _mm256_set1_pd(-0.0))); }
  static mask gt(reg a, reg b) { return _mm256_cmp_pd(a, b, _CMP_GT_OQ); }
  static mask lt(reg a, reg b) { return _mm256_cmp_pd(a, b, _CMP_LT_OQ); }
  static mask eq(reg a, reg b) { return _mm256_cmp_pd(a, b, _CMP_EQ_OQ); }
  static mask isnan(reg a) { return _mm256_cmp_pd(a, a, _CMP_UNORD_Q); }
  static reg blend(mask m, reg a, reg b) { return _mm256_blendv_pd(b, a, m); }
  // 2^n by the round-to-integer magic number: adding 1.5 * 2^52 + 1023 leaves
  // n + 1023 in the low mantissa bits, which the shift moves into the exponent.
  static reg pow2(reg n) {
    const reg biased = _mm256_add_pd(n, _mm256_set1_pd(6755399441055744.0 + 1023.0));
    return _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_castpd_si256(biased), 52));
  }
  static reg scale2n(reg v, reg n) {
    const reg n1 = _mm256_floor_pd(_mm256_mul_pd(n, _mm256_set1_pd(0.5)));
    return mul(mul(v, pow2(n1)), pow2(sub(n, n1)));
  }
  static void split(reg x, reg& m, reg& e) {
    const mask tiny = lt(x, set1(DBL_MIN));  // subnormal: scale by 2^54 first
    x = blend(tiny, mul(x, set1(18014398509481984.0)), x);
    const __m256i bits = _mm256_castpd_si256(x);
    // The biased exponent (< 2^11) or-ed into the mantissa of 2^52 reads as 2^52 + exponent.
    const reg two52 = set1(4503599627370496.0);
    const __m256i ex = _mm256_or_si256(_mm256_srli_epi64(bits, 52), _mm256_castpd_si256(two52));
    e = sub(_mm256_castsi256_pd(ex), set1(4503599627370496.0 + 1023.0));
    e = blend(tiny, sub(e, set1(54.0)), e);
    m = _mm256_castsi256_pd(_mm256_or_si256(_mm256_and_si256(bits, _mm256_set1_epi64x(0x000fffffffffffffLL)),
                                            _mm256_set1_epi64x(0x3ff0000000000000LL)));
  }
  static T hsum(reg v) {
    __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    s = _mm_add_sd(s, _mm_unpackhi_pd(s, s));
    return _mm_cvtsd_f64(s);
  }
};

}  // namespace
}  // namespace minifw
