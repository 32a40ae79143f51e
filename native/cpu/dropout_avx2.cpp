// Dropout's block kernel of dropout_impl.h, compiled for AVX2 + FMA, with the
// 16 Philox counters of a block in two vectors.
#include <immintrin.h>

#include "dropout.h"
#include "dropout_impl.h"

namespace minifw {
namespace {
// 32 x 32 -> 64-bit products of every lane: vpmuludq multiplies the even
// lanes; the odd lanes are shifted down for a second one.
inline void mulhilo(__m256i a, __m256i m, __m256i& hi, __m256i& lo) {
  const __m256i even = _mm256_mul_epu32(a, m);
  const __m256i odd = _mm256_mul_epu32(_mm256_srli_epi64(a, 32), m);
  lo = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
  hi = _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
}

void philox_16_avx2(uint64_t counter0, uint32_t k0, uint32_t k1, uint32_t* words) {
  const __m256i m0 = _mm256_set1_epi32(static_cast<int>(kPhiloxM0));
  const __m256i m1 = _mm256_set1_epi32(static_cast<int>(kPhiloxM1));
  const __m256i lo_ctr = _mm256_set1_epi32(static_cast<int>(static_cast<uint32_t>(counter0)));
  // counter0 % 16 == 0, so adding the lane number never carries into the high word.
  __m256i c0[2] = {_mm256_add_epi32(lo_ctr, _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)),
                   _mm256_add_epi32(lo_ctr, _mm256_setr_epi32(8, 9, 10, 11, 12, 13, 14, 15))};
  const __m256i hi_ctr = _mm256_set1_epi32(static_cast<int>(static_cast<uint32_t>(counter0 >> 32)));
  __m256i c1[2] = {hi_ctr, hi_ctr};
  __m256i c2[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
  __m256i c3[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
  for (int round = 0; round < 10; ++round) {
    const __m256i key0 = _mm256_set1_epi32(static_cast<int>(k0)), key1 = _mm256_set1_epi32(static_cast<int>(k1));
    for (int h = 0; h < 2; ++h) {
      __m256i hi0, lo0, hi1, lo1;
      mulhilo(c0[h], m0, hi0, lo0);
      mulhilo(c2[h], m1, hi1, lo1);
      c0[h] = _mm256_xor_si256(_mm256_xor_si256(hi1, c1[h]), key0);
      c2[h] = _mm256_xor_si256(_mm256_xor_si256(hi0, c3[h]), key1);
      c1[h] = lo1;
      c3[h] = lo0;
    }
    k0 += kPhiloxW0;
    k1 += kPhiloxW1;
  }
  const __m256i* rows[4] = {c0, c1, c2, c3};
  for (int w = 0; w < 4; ++w)
    for (int h = 0; h < 2; ++h)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(words + 16 * w + 8 * h), rows[w][h]);
}
}  // namespace

MINIFW_ISA_VARIANT(DropoutKernels<float>, avx2, make_dropout_kernels<float, philox_16_avx2>())
MINIFW_ISA_VARIANT(DropoutKernels<double>, avx2, make_dropout_kernels<double, philox_16_avx2>())
}  // namespace minifw
