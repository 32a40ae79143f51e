// Launchers of the softmax kernels (softmax.cu); see launchers.h.
#pragma once
#include "cpu/softmax.h"
#include "launchers.h"

#define MINIFW_SOFTMAX_LAUNCHERS                                                                            \
  template <typename T>                                                                                      \
  void softmax_forward(const SoftmaxShape& s, const T* x, T* y, bool log, void* stream);                     \
  template <typename T>                                                                                      \
  void softmax_backward(const SoftmaxShape& s, const T* dy, const T* y, T* dx, bool log, void* stream);
MINIFW_DECLARE_CUDA_LAUNCHERS(MINIFW_SOFTMAX_LAUNCHERS)
