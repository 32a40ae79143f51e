// Launcher of the emulator's self-test kernel (selftest.cu): one block of n threads
// (a multiple of 32, at most 1024) with the rule named by `fault` broken on purpose.
#pragma once
#include "launchers.h"

#define MINIFW_SELFTEST_LAUNCHERS void selftest(const char* fault, float* out, int64_t n, void* stream);
MINIFW_DECLARE_CUDA_LAUNCHERS(MINIFW_SELFTEST_LAUNCHERS)
