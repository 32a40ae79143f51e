// Winograd's transforms (conv_winograd_impl.h), compiled for AVX-512.
#include "conv_winograd_impl.h"
#include "simd_avx512.h"

namespace minifw {
MINIFW_ISA_VARIANT(WinogradKernels<float>, avx512, make_winograd_kernels<F32x16>())
MINIFW_ISA_VARIANT(WinogradKernels<double>, avx512, make_winograd_kernels<F64x8>())
}  // namespace minifw
