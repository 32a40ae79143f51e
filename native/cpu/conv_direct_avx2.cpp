// The direct convolution's tiles (conv_direct_impl.h) for AVX2: 6 rows x 16 floats,
// 12 accumulators + 2 B vectors + 1 broadcast of the 16 ymm registers (the forward's
// tiles along the layout, the backward-filter's and the row tiles; row tiles of one
// vector: up to 12 positions).
#include "conv_direct_impl.h"
#include "simd_avx2.h"

namespace minifw {
MINIFW_ISA_VARIANT(DirectKernels<float>, avx2, (make_direct_kernels<F32x8, 6>()))
MINIFW_ISA_VARIANT(DirectKernels<double>, avx2, (make_direct_kernels<F64x4, 6>()))
}  // namespace minifw
