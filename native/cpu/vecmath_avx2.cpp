// AVX2 + FMA versions of the vecmath functions (compiled with -mavx2 -mfma).
#include "simd_avx2.h"
#include "vecmath.h"
#include "vecmath_impl.h"

namespace minifw {
MINIFW_ISA_VARIANT(VecMath<float>, avx2, make_vecmath<F32x8>("avx2"))
MINIFW_ISA_VARIANT(VecMath<double>, avx2, make_vecmath<F64x4>("avx2"))
}  // namespace minifw
