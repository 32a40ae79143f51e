// Launchers of the activation kernels (activation.cu); see launchers.h.
#pragma once
#include "cpu/activation.h"
#include "launchers.h"

#define MINIFW_ACTIVATION_LAUNCHERS                                                                         \
  template <typename T>                                                                                      \
  void activation_forward(const ActParams& p, const T* x, T* y, int64_t n, void* stream);                    \
  template <typename T>                                                                                      \
  void activation_backward(const ActParams& p, const T* dy, const T* y, const T* x, T* dx, int64_t n,        \
                           void* stream);
MINIFW_DECLARE_CUDA_LAUNCHERS(MINIFW_ACTIVATION_LAUNCHERS)
