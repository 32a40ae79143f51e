// The LRN block kernels of lrn_impl.h, compiled for AVX-512.
#include "lrn.h"
#include "lrn_impl.h"

namespace minifw {
MINIFW_ISA_VARIANT(LrnKernels<float>, avx512, make_lrn_kernels<float, Isa::avx512>())
MINIFW_ISA_VARIANT(LrnKernels<double>, avx512, make_lrn_kernels<double, Isa::avx512>())
}  // namespace minifw
