// Launchers of the LRN kernels (lrn.cu); see launchers.h.
#pragma once
#include "cpu/lrn.h"
#include "launchers.h"

#define MINIFW_LRN_LAUNCHERS                                                                                  \
  template <typename T>                                                                                        \
  void lrn_forward(const LrnShape& s, const T* x, T* y, T* scale, void* stream);                              \
  template <typename T>                                                                                        \
  void lrn_backward(const LrnShape& s, const T* dy, const T* x, const T* y, const T* scale, T* dx, void* stream);
MINIFW_DECLARE_CUDA_LAUNCHERS(MINIFW_LRN_LAUNCHERS)
