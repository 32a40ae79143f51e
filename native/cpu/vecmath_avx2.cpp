// AVX2 + FMA versions of the vecmath functions (compiled with -mavx2 -mfma).
#include "simd_avx2.h"
#include "vecmath.h"
#include "vecmath_impl.h"

namespace minifw {

const VecMath<float>& vecmath_avx2_f32() {
  static const VecMath<float> table = make_vecmath<F32x8>("avx2");
  return table;
}
const VecMath<double>& vecmath_avx2_f64() {
  static const VecMath<double> table = make_vecmath<F64x4>("avx2");
  return table;
}
}  // namespace minifw
