// Dropout's block kernel of dropout_impl.h, compiled for AVX-512, with the
// 16 Philox counters of a block in one vector.
#include <immintrin.h>

#include "dropout.h"
#include "dropout_impl.h"

namespace minifw {
namespace {
// 32 x 32 -> 64-bit products of every lane: vpmuludq multiplies the even
// lanes; the odd lanes are shifted down for a second one.
inline void mulhilo(__m512i a, __m512i m, __m512i& hi, __m512i& lo) {
  const __m512i even = _mm512_mul_epu32(a, m);
  const __m512i odd = _mm512_mul_epu32(_mm512_srli_epi64(a, 32), m);
  lo = _mm512_mask_blend_epi32(0xAAAA, even, _mm512_slli_epi64(odd, 32));
  hi = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(even, 32), odd);
}

void philox_16_avx512(uint64_t counter0, uint32_t k0, uint32_t k1, uint32_t* words) {
  const __m512i lanes = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  // counter0 % 16 == 0, so adding the lane number never carries into the high word.
  __m512i c0 = _mm512_add_epi32(_mm512_set1_epi32(static_cast<int>(static_cast<uint32_t>(counter0))), lanes);
  __m512i c1 = _mm512_set1_epi32(static_cast<int>(static_cast<uint32_t>(counter0 >> 32)));
  __m512i c2 = _mm512_setzero_si512(), c3 = _mm512_setzero_si512();
  const __m512i m0 = _mm512_set1_epi32(static_cast<int>(kPhiloxM0));
  const __m512i m1 = _mm512_set1_epi32(static_cast<int>(kPhiloxM1));
  for (int round = 0; round < 10; ++round) {
    __m512i hi0, lo0, hi1, lo1;
    mulhilo(c0, m0, hi0, lo0);
    mulhilo(c2, m1, hi1, lo1);
    c0 = _mm512_xor_si512(_mm512_xor_si512(hi1, c1), _mm512_set1_epi32(static_cast<int>(k0)));
    c2 = _mm512_xor_si512(_mm512_xor_si512(hi0, c3), _mm512_set1_epi32(static_cast<int>(k1)));
    c1 = lo1;
    c3 = lo0;
    k0 += kPhiloxW0;
    k1 += kPhiloxW1;
  }
  _mm512_storeu_si512(words, c0);
  _mm512_storeu_si512(words + 16, c1);
  _mm512_storeu_si512(words + 32, c2);
  _mm512_storeu_si512(words + 48, c3);
}
}  // namespace

MINIFW_ISA_VARIANT(DropoutKernels<float>, avx512, make_dropout_kernels<float, philox_16_avx512>())
MINIFW_ISA_VARIANT(DropoutKernels<double>, avx512, make_dropout_kernels<double, philox_16_avx512>())
}  // namespace minifw
