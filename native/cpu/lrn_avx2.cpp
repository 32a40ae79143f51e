// The LRN block kernels of lrn_impl.h, compiled for AVX2 + FMA.
#include "lrn.h"
#include "lrn_impl.h"

namespace minifw {
MINIFW_ISA_VARIANT(LrnKernels<float>, avx2, make_lrn_kernels<float, Isa::avx2>())
MINIFW_ISA_VARIANT(LrnKernels<double>, avx2, make_lrn_kernels<double, Isa::avx2>())
}  // namespace minifw
