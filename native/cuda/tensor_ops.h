// Launchers of the bias and tensor-op kernels (tensor_ops.cu); see launchers.h.
// Same arguments and semantics as cpu/tensor_ops.h, with a stream for the
// thread count.
#pragma once
#include "cpu/tensor_ops.h"
#include "launchers.h"

#define MINIFW_TENSOR_OPS_LAUNCHERS                                                                           \
  template <typename T>                                                                                        \
  void bias_add(int64_t outer, int64_t C, int64_t inner, const T* x, const T* bias, T* y, void* stream);      \
  template <typename T>                                                                                        \
  void bias_backward(int64_t outer, int64_t C, int64_t inner, const T* dy, T* db, void* stream);              \
  template <typename T>                                                                                        \
  void add_tensor(int ndim, const int64_t* shape, const int64_t* a_shape, const T* a, const T* c, T* out,      \
                  T alpha, T beta, void* stream);                                                              \
  template <typename T>                                                                                        \
  void scale_tensor(const T* x, T* y, int64_t n, T alpha, void* stream);
MINIFW_DECLARE_CUDA_LAUNCHERS(MINIFW_TENSOR_OPS_LAUNCHERS)
