// The direct convolution's tiles (conv_direct_impl.h) for AVX-512: up to 14 rows x 32
// floats, 28 accumulators + 2 B vectors + 1 broadcast of the 32 zmm registers (the
// forward's tiles along the layout, the backward-filter's and the row tiles; row tiles
// of one vector: up to 28 positions).
#include "conv_direct_impl.h"
#include "simd_avx512.h"

namespace minifw {
MINIFW_ISA_VARIANT(DirectKernels<float>, avx512, (make_direct_kernels<F32x16, 14>()))
MINIFW_ISA_VARIANT(DirectKernels<double>, avx512, (make_direct_kernels<F64x8, 14>()))
}  // namespace minifw
