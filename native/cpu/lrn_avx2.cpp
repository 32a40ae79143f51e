// The LRN block kernels of lrn_impl.h, compiled for AVX2 + FMA.
#include "lrn.h"
#include "lrn_impl.h"

namespace minifw {
const LrnKernels<float>& lrn_kernels_avx2_f32() {
  static const LrnKernels<float> k = make_lrn_kernels<float, vecmath_avx2_f32>();
  return k;
}
const LrnKernels<double>& lrn_kernels_avx2_f64() {
  static const LrnKernels<double> k = make_lrn_kernels<double, vecmath_avx2_f64>();
  return k;
}
}  // namespace minifw
