// The pooling plane kernels of pooling_impl.h (explicit SIMD for float,
// vectorized loops for double), compiled for AVX-512.
#include "pooling.h"
#include "pooling_impl.h"
#include "simd_avx512.h"

namespace minifw {
const PoolKernels<float>& pool_kernels_avx512_f32() {
  static const PoolKernels<float> k = make_pool_kernels_simd<F32x16>();
  return k;
}
const PoolKernels<double>& pool_kernels_avx512_f64() {
  static const PoolKernels<double> k = make_pool_kernels<double>();
  return k;
}
}  // namespace minifw
