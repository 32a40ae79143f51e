// The implicit GEMM's packers for the baseline build (conv_pack_impl.h).
#include "conv_pack_impl.h"

namespace minifw {
MINIFW_ISA_VARIANT(ConvPackers<float>, generic, (make_conv_packers<float, PlainRuns<float>>()))
MINIFW_ISA_VARIANT(ConvPackers<double>, generic, (make_conv_packers<double, PlainRuns<double>>()))
}  // namespace minifw
