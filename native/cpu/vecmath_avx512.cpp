// AVX-512 versions of the vecmath functions (compiled with -mavx512f/bw/dq/vl).
#include "simd_avx512.h"
#include "vecmath.h"
#include "vecmath_impl.h"

namespace minifw {

const VecMath<float>& vecmath_avx512_f32() {
  static const VecMath<float> table = make_vecmath<F32x16>("avx512");
  return table;
}
const VecMath<double>& vecmath_avx512_f64() {
  static const VecMath<double> table = make_vecmath<F64x8>("avx512");
  return table;
}
}  // namespace minifw
