// The pooling plane kernels of pooling_impl.h (explicit SIMD for float,
// vectorized loops for double), compiled for AVX2 + FMA.
#include "pooling.h"
#include "pooling_impl.h"
#include "simd_avx2.h"

namespace minifw {
const PoolKernels<float>& pool_kernels_avx2_f32() {
  static const PoolKernels<float> k = make_pool_kernels_simd<F32x8>();
  return k;
}
const PoolKernels<double>& pool_kernels_avx2_f64() {
  static const PoolKernels<double> k = make_pool_kernels<double>();
  return k;
}
}  // namespace minifw
