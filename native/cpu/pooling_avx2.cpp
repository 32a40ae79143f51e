// The pooling plane kernels of pooling_impl.h (explicit SIMD for float,
// vectorized loops for double), compiled for AVX2 + FMA.
#include "pooling.h"
#include "pooling_impl.h"
#include "simd_avx2.h"

namespace minifw {
MINIFW_ISA_VARIANT(PoolKernels<float>, avx2, make_pool_kernels_simd<F32x8>())
MINIFW_ISA_VARIANT(PoolKernels<double>, avx2, make_pool_kernels<double>())
}  // namespace minifw
