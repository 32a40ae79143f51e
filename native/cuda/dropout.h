// Launchers of the dropout kernels (dropout.cu); see launchers.h.
#pragma once
#include "launchers.h"

// The same semantics and the same mask as cpu/dropout.h: element i is kept when
// its Philox-4x32-10 word (counter 16 * (i / 64) + i % 16, word (i % 64) / 16,
// keyed by the seed) is >= floor(p * 2^32); p = 1 drops all (y = 0), p = 0 keeps
// all (y = x).
#define MINIFW_DROPOUT_LAUNCHERS                                                                            \
  template <typename T>                                                                                      \
  void dropout_forward(const T* x, T* y, uint8_t* mask, int64_t n, double p, uint64_t seed, void* stream);   \
  template <typename T>                                                                                      \
  void dropout_backward(const T* dy, const uint8_t* mask, T* dx, int64_t n, double p, void* stream);
MINIFW_DECLARE_CUDA_LAUNCHERS(MINIFW_DROPOUT_LAUNCHERS)
