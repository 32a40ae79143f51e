// Launcher of the tensor-core self-test kernel (wmma_selftest.cu): one block of two
// warps, each computing the TF32 product of a (16 x 8) and b (8 x 16) into its
// 16 x 16 slice of out, with the wmma rule named by `fault` broken on purpose.
#pragma once
#include "launchers.h"

#define MINIFW_WMMA_SELFTEST_LAUNCHERS \
  void wmma_selftest(const char* fault, const float* a, const float* b, float* out, void* stream);
MINIFW_DECLARE_CUDA_LAUNCHERS(MINIFW_WMMA_SELFTEST_LAUNCHERS)
