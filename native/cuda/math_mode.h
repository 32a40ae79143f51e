// Which float32 products the CUDA kernels may run on TF32 tensor cores (10-bit
// mantissas in, float accumulation), as PyTorch's
// torch.backends.cuda.matmul.allow_tf32 and torch.backends.cudnn.allow_tf32:
// minifw.backends.cuda.matmul.allow_tf32 and minifw.backends.cudnn.allow_tf32.
// Both start off, so float32 results on a GPU match the CPU's unless asked.
// Plain host C++: the launchers of both builds (nvcc's minifw::cuda and the
// emulator's minifw::cudasim) read the one pair of flags (native/math_mode.cpp).
#pragma once

namespace minifw {

enum class Tf32Use {
  matmul,  // the GEMM launcher (gemm.h): ops.gemm, Linear, the recurrent layers' GEMMs
  conv,    // convolution, every algorithm and direction
};

bool tf32_allowed(Tf32Use use);
void set_tf32_allowed(Tf32Use use, bool allowed);

}  // namespace minifw
