// The depthwise convolution's per-plane kernels (conv_depthwise_impl.h) compiled for AVX2.
#include "conv_depthwise_impl.h"

namespace minifw {
MINIFW_ISA_VARIANT(DepthwiseKernels<float>, avx2, make_depthwise_kernels<float>())
MINIFW_ISA_VARIANT(DepthwiseKernels<double>, avx2, make_depthwise_kernels<double>())
}  // namespace minifw
