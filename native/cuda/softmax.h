// Launchers of the softmax and cross-entropy kernels (softmax.cu); see launchers.h.
// Cross-entropy has cpu/softmax.h's semantics; its results that the host needs
// (the loss sum in double, the count of non-ignored targets, the first position
// with an out-of-range target or -1) are written to `sums`, one CrossEntropySums
// in device memory, by a kernel: read them once the stream has run it. The
// backward fills count and bad_position (loss_sum is 0).
#pragma once
#include "cpu/softmax.h"
#include "launchers.h"

#define MINIFW_SOFTMAX_LAUNCHERS                                                                            \
  template <typename T>                                                                                      \
  void softmax_forward(const SoftmaxShape& s, const T* x, T* y, bool log, void* stream);                     \
  template <typename T>                                                                                      \
  void softmax_backward(const SoftmaxShape& s, const T* dy, const T* y, T* dx, bool log, void* stream);      \
  template <typename T>                                                                                      \
  void cross_entropy_forward(const SoftmaxShape& s, const T* logits, const int64_t* target,                  \
                             int64_t ignore_index, double label_smoothing, T* log_probs, T* losses,          \
                             CrossEntropySums* sums, void* stream);                                          \
  template <typename T>                                                                                      \
  void cross_entropy_backward(const SoftmaxShape& s, const T* log_probs, const int64_t* target,              \
                              int64_t ignore_index, double label_smoothing, const T* grad,                   \
                              double grad_scalar, bool divide_by_count, T* dlogits, CrossEntropySums* sums,  \
                              void* stream);
MINIFW_DECLARE_CUDA_LAUNCHERS(MINIFW_SOFTMAX_LAUNCHERS)
