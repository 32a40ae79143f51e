// AVX2 + FMA micro-kernels (this file is compiled with -mavx2 -mfma).
#include "gemm.h"
#include "gemm_dot.h"
#include "gemm_microkernel.h"
#include "simd_avx2.h"

namespace minifw {
namespace {
// (The few-row kernel's 4 x 2 tile: 8 accumulators + 2 B vectors + 1 A vector.)
// 6 x 16 floats: 12 accumulators + 2 B vectors + 1 broadcast = 15 of 16 ymm.
// Four steps of K per loop iteration (fewer loop instructions among the
// FMAs): on a Zen 3 that alone took the 1024^3 product from 0.82x to about
// 0.9x OpenBLAS's speed.
template <bool Stream = false>
void sgemm_avx2_6x16(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, float alpha,
                     float beta) {
  micro_kernel_impl<F32x8, 6, 2, 4, Stream>(kc, a, b, c, ldc, alpha, beta);
}
// 4 x 24 floats: 12 accumulators + 3 B vectors + 1 broadcast, for products
// with few rows, which 6-row tiles would pad: a recurrent step's batch of 20
// rows ran at 1.3x OpenBLAS's speed as 6-row tiles, 1.45x as 4-row ones.
void sgemm_avx2_4x24(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, float alpha,
                     float beta) {
  micro_kernel_impl<F32x8, 4, 3, 4>(kc, a, b, c, ldc, alpha, beta);
}
void dgemm_avx2_4x12(int64_t kc, const double* a, const double* b, double* c, int64_t ldc,
                     double alpha, double beta) {
  micro_kernel_impl<F64x4, 4, 3, 4>(kc, a, b, c, ldc, alpha, beta);
}
template <bool Stream = false>
void dgemm_avx2_6x8(int64_t kc, const double* a, const double* b, double* c, int64_t ldc,
                    double alpha, double beta) {
  micro_kernel_impl<F64x4, 6, 2, 4, Stream>(kc, a, b, c, ldc, alpha, beta);
}
}  // namespace

MINIFW_ISA_VARIANT(GemmKernels<float>, avx2,
                   {{{6, 16, 256, 144, 2048, sgemm_avx2_6x16<>, "avx2 6x16", false, 0, 0, 0, sgemm_avx2_6x16<true>},
                     {4, 24, 256, 144, 2048, sgemm_avx2_4x24, "avx2 4x24"}},  // rows of 1.5 cache lines: no stream
                    2,
                    dot_gemm_columns<F32x8, 4, 2>,
                    2})
MINIFW_ISA_VARIANT(GemmKernels<double>, avx2,
                   {{{6, 8, 256, 96, 1024, dgemm_avx2_6x8<>, "avx2 6x8", false, 0, 0, 0, dgemm_avx2_6x8<true>},
                     {4, 12, 256, 96, 1024, dgemm_avx2_4x12, "avx2 4x12"}},
                    2,
                    dot_gemm_columns<F64x4, 4, 2>,
                    2})
}  // namespace minifw
