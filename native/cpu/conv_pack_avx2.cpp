// The implicit GEMM's packers (conv_pack_impl.h), compiled for AVX2: runs in 256-bit vectors.
#include "conv_pack_impl.h"
#include "simd_avx2.h"

namespace minifw {
MINIFW_ISA_VARIANT(ConvPackers<float>, avx2, (make_conv_packers<float, SimdRuns<F32x8>>()))
MINIFW_ISA_VARIANT(ConvPackers<double>, avx2, (make_conv_packers<double, SimdRuns<F64x4>>()))
}  // namespace minifw
