// AVX2 + FMA micro-kernels (this file is compiled with -mavx2 -mfma).
#include <immintrin.h>

#include "gemm.h"
#include "gemm_microkernel.h"

namespace minifw {
namespace {
struct F32x8 {
  using T = float;
  using reg = __m256;
  static constexpr int lanes = 8;
  static reg zero() { return _mm256_setzero_ps(); }
  static reg set1(T x) { return _mm256_set1_ps(x); }
  static reg broadcast(const T* p) { return _mm256_broadcast_ss(p); }
  static reg load(const T* p) { return _mm256_loadu_ps(p); }
  static void store(T* p, reg x) { _mm256_storeu_ps(p, x); }
  static reg fma(reg a, reg b, reg c) { return _mm256_fmadd_ps(a, b, c); }
  static reg mul(reg a, reg b) { return _mm256_mul_ps(a, b); }
  static void prefetch(const T* p) { _mm_prefetch(reinterpret_cast<const char*>(p), _MM_HINT_T0); }
};
struct F64x4 {
  using T = double;
  using reg = __m256d;
  static constexpr int lanes = 4;
  static reg zero() { return _mm256_setzero_pd(); }
  static reg set1(T x) { return _mm256_set1_pd(x); }
  static reg broadcast(const T* p) { return _mm256_broadcast_sd(p); }
  static reg load(const T* p) { return _mm256_loadu_pd(p); }
  static void store(T* p, reg x) { _mm256_storeu_pd(p, x); }
  static reg fma(reg a, reg b, reg c) { return _mm256_fmadd_pd(a, b, c); }
  static reg mul(reg a, reg b) { return _mm256_mul_pd(a, b); }
  static void prefetch(const T* p) { _mm_prefetch(reinterpret_cast<const char*>(p), _MM_HINT_T0); }
};

// 6 x 16 floats: 12 accumulators + 2 B vectors + 1 broadcast = 15 of 16 ymm.
void sgemm_avx2_6x16(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, float alpha,
                     float beta) {
  micro_kernel_impl<F32x8, 6, 2>(kc, a, b, c, ldc, alpha, beta);
}
void dgemm_avx2_6x8(int64_t kc, const double* a, const double* b, double* c, int64_t ldc,
                    double alpha, double beta) {
  micro_kernel_impl<F64x4, 6, 2>(kc, a, b, c, ldc, alpha, beta);
}
}  // namespace

MINIFW_ISA_VARIANT(GemmKernels<float>, avx2, {{{6, 16, 256, 144, 2048, sgemm_avx2_6x16, "avx2 6x16"}}, 1})
MINIFW_ISA_VARIANT(GemmKernels<double>, avx2, {{{6, 8, 256, 96, 1024, dgemm_avx2_6x8, "avx2 6x8"}}, 1})
}  // namespace minifw
