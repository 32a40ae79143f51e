// Launchers of the fused optimizer updates (optim.cu); see launchers.h.
// Same arguments and formulas as cpu/optim.h, with a stream for the thread
// count.
#pragma once
#include "cpu/optim.h"
#include "launchers.h"

#define MINIFW_OPTIM_LAUNCHERS                                                                                \
  template <typename T>                                                                                        \
  void sgd_step(int64_t n, T* p, const T* g, T* buf, T lr, T momentum, T keep, T weight_decay,           \
                bool nesterov, bool maximize, bool first_step, void* stream);
MINIFW_DECLARE_CUDA_LAUNCHERS(MINIFW_OPTIM_LAUNCHERS)
