// Softmax, log-softmax and cross-entropy over the middle axis of an array seen
// as (outer, C, inner): the classes of an (N, C) matrix (inner = 1), or the
// channels at every position of an NCHW tensor (outer = N, inner = H * W).
// Every softmax subtracts the maximum over C first, so no exp overflows.
#pragma once
#include <cstdint>

namespace minifw {

struct SoftmaxShape {
  int64_t outer, C, inner;
  int64_t size() const { return outer * C * inner; }
  int64_t positions() const { return outer * inner; }
};

template <typename T>
void softmax_forward(const SoftmaxShape& s, const T* x, T* y, bool log, int nthreads);

// dx from dy and the forward output y (softmax, or log-softmax when log).
template <typename T>
void softmax_backward(const SoftmaxShape& s, const T* dy, const T* y, T* dx, bool log, int nthreads);

// Cross-entropy with class-index targets, fused with log-softmax (PyTorch's
// definition): at each position, with eps = label smoothing,
//   loss = (1 - eps) * (-log_probs[t]) + eps / C * sum_c (-log_probs[c]),
// and 0 where t == ignore_index.
struct CrossEntropySums {
  double loss_sum;      // over positions, in position order (independent of threads)
  int64_t count;        // positions whose target is not ignore_index
  int64_t bad_position; // first position whose target is out of range, or -1
};

template <typename T>
CrossEntropySums cross_entropy_forward(const SoftmaxShape& s, const T* logits, const int64_t* target,
                                       int64_t ignore_index, double label_smoothing, T* log_probs, T* losses,
                                       int nthreads);

// dlogits = g * (softmax - (1 - eps) * onehot(t) - eps / C), 0 at ignored
// positions, where g = grad[position] when grad is given, else grad_scalar
// divided by the non-ignored count when divide_by_count (mean), else grad_scalar.
// Returns the first position with an out-of-range target, or -1.
template <typename T>
int64_t cross_entropy_backward(const SoftmaxShape& s, const T* log_probs, const int64_t* target,
                               int64_t ignore_index, double label_smoothing, const T* grad, double grad_scalar,
                               bool divide_by_count, T* dlogits, int nthreads);

}  // namespace minifw
