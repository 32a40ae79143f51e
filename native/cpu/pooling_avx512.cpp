// The pooling plane kernels of pooling_impl.h (explicit SIMD for float,
// vectorized loops for double), compiled for AVX-512.
#include "pooling.h"
#include "pooling_impl.h"
#include "simd_avx512.h"

namespace minifw {
MINIFW_ISA_VARIANT(PoolKernels<float>, avx512, make_pool_kernels_simd<F32x16>())
MINIFW_ISA_VARIANT(PoolKernels<double>, avx512, make_pool_kernels<double>())
}  // namespace minifw
