// Launchers of the batch-normalization kernels (batchnorm.cu); see launchers.h.
// The same arguments and semantics as cpu/batchnorm.h: weight, bias may be null;
// running_mean and running_var may be null in training (not updated).
#pragma once
#include "cpu/batchnorm.h"
#include "launchers.h"

#define MINIFW_BATCHNORM_LAUNCHERS                                                                          \
  template <typename T>                                                                                      \
  void batch_norm_forward_training(const BnShape& s, const T* x, const T* weight, const T* bias,             \
                                   T* running_mean, T* running_var, double momentum, double eps, T* y,       \
                                   T* save_mean, T* save_invstd, void* stream);                              \
  template <typename T>                                                                                      \
  void batch_norm_forward_inference(const BnShape& s, const T* x, const T* weight, const T* bias,            \
                                    const T* running_mean, const T* running_var, double eps, T* y,           \
                                    void* stream);                                                           \
  template <typename T>                                                                                      \
  void batch_norm_backward(const BnShape& s, const T* dy, const T* x, const T* weight, const T* save_mean,   \
                           const T* save_invstd, T* dx, T* dweight, T* dbias, void* stream);
MINIFW_DECLARE_CUDA_LAUNCHERS(MINIFW_BATCHNORM_LAUNCHERS)
