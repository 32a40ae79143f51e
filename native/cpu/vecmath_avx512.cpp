// AVX-512 versions of the vecmath functions (compiled with -mavx512f/bw/dq/vl).
#include "simd_avx512.h"
#include "vecmath.h"
#include "vecmath_impl.h"

namespace minifw {
MINIFW_ISA_VARIANT(VecMath<float>, avx512, make_vecmath<F32x16>("avx512"))
MINIFW_ISA_VARIANT(VecMath<double>, avx512, make_vecmath<F64x8>("avx512"))
}  // namespace minifw
