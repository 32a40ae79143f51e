// AVX-512 micro-kernels (this file is compiled with -mavx512f and friends).
#include <immintrin.h>

#include "gemm.h"
#include "gemm_microkernel.h"

namespace minifw {
namespace {
struct F32x16 {
  using T = float;
  using reg = __m512;
  static constexpr int lanes = 16;
  static reg zero() { return _mm512_setzero_ps(); }
  static reg set1(T x) { return _mm512_set1_ps(x); }
  static reg broadcast(const T* p) { return _mm512_set1_ps(*p); }
  static reg load(const T* p) { return _mm512_loadu_ps(p); }
  static void store(T* p, reg x) { _mm512_storeu_ps(p, x); }
  static reg fma(reg a, reg b, reg c) { return _mm512_fmadd_ps(a, b, c); }
  static reg mul(reg a, reg b) { return _mm512_mul_ps(a, b); }
  static void prefetch(const T* p) { _mm_prefetch(reinterpret_cast<const char*>(p), _MM_HINT_T0); }
};
struct F64x8 {
  using T = double;
  using reg = __m512d;
  static constexpr int lanes = 8;
  static reg zero() { return _mm512_setzero_pd(); }
  static reg set1(T x) { return _mm512_set1_pd(x); }
  static reg broadcast(const T* p) { return _mm512_set1_pd(*p); }
  static reg load(const T* p) { return _mm512_loadu_pd(p); }
  static void store(T* p, reg x) { _mm512_storeu_pd(p, x); }
  static reg fma(reg a, reg b, reg c) { return _mm512_fmadd_pd(a, b, c); }
  static reg mul(reg a, reg b) { return _mm512_mul_pd(a, b); }
  static void prefetch(const T* p) { _mm_prefetch(reinterpret_cast<const char*>(p), _MM_HINT_T0); }
};

// MR x 32 floats: 2 * MR accumulators + 2 B vectors + 1 broadcast; MR = 14
// fills 31 of the 32 zmm registers. The shorter blocks serve products whose
// row count a 14-row block would pad (see gemm_kernel).
template <int MR>
void sgemm_avx512(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, float alpha, float beta) {
  micro_kernel_impl<F32x16, MR, 2>(kc, a, b, c, ldc, alpha, beta);
}
void dgemm_avx512_14x16(int64_t kc, const double* a, const double* b, double* c, int64_t ldc,
                        double alpha, double beta) {
  micro_kernel_impl<F64x8, 14, 2>(kc, a, b, c, ldc, alpha, beta);
}
}  // namespace

// (A 12-row block measured a third slower than the others here.)
MINIFW_ISA_VARIANT(GemmKernels<float>, avx512,
                   {{{14, 32, 384, 560, 512, sgemm_avx512<14>, "avx512 14x32", true},
                     {10, 32, 384, 560, 512, sgemm_avx512<10>, "avx512 10x32", true},
                     {8, 32, 384, 560, 512, sgemm_avx512<8>, "avx512 8x32", true}},
                    3})
MINIFW_ISA_VARIANT(GemmKernels<double>, avx512,
                   {{{14, 16, 256, 168, 1024, dgemm_avx512_14x16, "avx512 14x16"}}, 1})
}  // namespace minifw
