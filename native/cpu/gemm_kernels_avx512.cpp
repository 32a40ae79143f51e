// AVX-512 micro-kernels (this file is compiled with -mavx512f and friends).
#include "gemm.h"
#include "gemm_dot.h"
#include "gemm_microkernel.h"
#include "simd_avx512.h"

namespace minifw {
namespace {
// MR x 32 floats: 2 * MR accumulators + 2 B vectors + 1 broadcast; MR = 14
// fills 31 of the 32 zmm registers. The shorter blocks serve products whose
// row count a 14-row block would pad (see gemm_kernel).
template <int MR, bool Stream = false>
void sgemm_avx512(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, float alpha, float beta) {
  micro_kernel_impl<F32x16, MR, 2, 1, Stream>(kc, a, b, c, ldc, alpha, beta);
}
template <bool Stream = false>
void dgemm_avx512_14x16(int64_t kc, const double* a, const double* b, double* c, int64_t ldc,
                        double alpha, double beta) {
  micro_kernel_impl<F64x8, 14, 2, 1, Stream>(kc, a, b, c, ldc, alpha, beta);
}
}  // namespace

// (A 12-row block measured a third slower than the others here.) Past 560
// rows, the GotoBLAS order with 280-row blocks of A: on a 2-core Xeon (48 KiB
// L1d, 2 MiB L2), 2048^3 went from 0.88x to 0.94x OpenBLAS's speed, where
// 560-row blocks in that order gained nothing.
MINIFW_ISA_VARIANT(GemmKernels<float>, avx512,
                   {{{14, 32, 384, 560, 512, sgemm_avx512<14>, "avx512 14x32", true, 280, 2048, 0,
                      sgemm_avx512<14, true>},
                     {10, 32, 384, 560, 512, sgemm_avx512<10>, "avx512 10x32", true, 280, 2048, 0,
                      sgemm_avx512<10, true>},
                     {8, 32, 384, 560, 512, sgemm_avx512<8>, "avx512 8x32", true, 280, 2048, 0,
                      sgemm_avx512<8, true>}},
                    3,
                    dot_gemm_columns<F32x16, 4, 4>,
                    4})
MINIFW_ISA_VARIANT(GemmKernels<double>, avx512,
                   {{{14, 16, 256, 168, 1024, dgemm_avx512_14x16<>, "avx512 14x16", false, 0, 0, 0,
                      dgemm_avx512_14x16<true>}},
                    1,
                    dot_gemm_columns<F64x8, 4, 4>, 4})
}  // namespace minifw
