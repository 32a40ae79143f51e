// The depthwise convolution's per-plane kernels (conv_depthwise_impl.h) compiled for AVX-512.
#include "conv_depthwise_impl.h"

namespace minifw {
MINIFW_ISA_VARIANT(DepthwiseKernels<float>, avx512, make_depthwise_kernels<float>())
MINIFW_ISA_VARIANT(DepthwiseKernels<double>, avx512, make_depthwise_kernels<double>())
}  // namespace minifw
