// Batch normalization over an array seen as (outer, C, inner): per channel of
// NCHW (outer = N, inner = H * W, "spatial") or per activation of (N, C)
// (inner = 1). M = outer * inner values per channel.
//
// Training forward: mean and biased variance of the batch normalize x;
// save_mean and save_invstd = 1 / sqrt(var + eps) are kept for the backward;
// running stats, when given, become (1 - momentum) * running + momentum *
// batch statistic, with the unbiased variance (as PyTorch). Statistics are
// accumulated in double, in two passes (mean, then squared deviations).
#pragma once
#include <cstdint>

namespace minifw {

struct BnShape {
  int64_t outer, C, inner;
  int64_t size() const { return outer * C * inner; }
  int64_t per_channel() const { return outer * inner; }
};

// weight / bias may be null (1 / 0); running_mean / running_var may be null
// (not updated). Needs per_channel() > 1.
template <typename T>
void batch_norm_forward_training(const BnShape& s, const T* x, const T* weight, const T* bias, T* running_mean,
                                 T* running_var, double momentum, double eps, T* y, T* save_mean, T* save_invstd,
                                 int nthreads);

template <typename T>
void batch_norm_forward_inference(const BnShape& s, const T* x, const T* weight, const T* bias,
                                  const T* running_mean, const T* running_var, double eps, T* y, int nthreads);

// Training-mode backward: dx, dweight (sum of dy * xhat), dbias (sum of dy).
template <typename T>
void batch_norm_backward(const BnShape& s, const T* dy, const T* x, const T* weight, const T* save_mean,
                         const T* save_invstd, T* dx, T* dweight, T* dbias, int nthreads);

}  // namespace minifw
