// Winograd's transforms (conv_winograd_impl.h), compiled for AVX2 + FMA.
#include "conv_winograd_impl.h"
#include "simd_avx2.h"

namespace minifw {
MINIFW_ISA_VARIANT(WinogradKernels<float>, avx2, make_winograd_kernels<F32x8>())
MINIFW_ISA_VARIANT(WinogradKernels<double>, avx2, make_winograd_kernels<F64x4>())
}  // namespace minifw
