// Batch normalization on the GPU, with the statistics of cpu/batchnorm.cpp:
// per channel, in double, in two passes (the mean, then the squared deviations
// from it), and y = (x - mean) * (invstd * w) + b with the mean subtracted first.
//
// Training forward and backward: a block owns a group of channels and makes all
// of their passes (sums, per-channel coefficients, the elementwise output), so
// one launch does it all and every sum has a fixed order (deterministic). The
// layout picks the group:
// - wide (inner >= 32, NCHW planes): one channel; threads.x run along a plane's
//   contiguous values, threads.y over the batch; the block reduces by warp
//   shuffles, then one partial per warp in shared memory;
// - narrow (inner < 32, e.g. (N, C)): the 32 / inner channels whose values are
//   32 (or fewer) contiguous columns of each row; threads.x are the columns,
//   threads.y walk the rows; the column sums go through shared memory.
// A channel's values are one block's work, so C blocks run at once: plenty for
// the layers of a CNN (64 to 512 channels), few for a huge plane and C = 3.
// Inference is elementwise: a thread owns one column (a channel, a position
// within its plane), computes that channel's scale once and walks the rows.
#include <cmath>

#include "batchnorm.h"
#include "common.cuh"

namespace minifw {
namespace MINIFW_CUDA_NS {
namespace {

constexpr int kThreads = 256;  // per block, in every kernel here
constexpr int kColumns = 32;   // threads.x of the narrow layout and of inference

// How the training and backward kernels split the channels.
struct Tiling {
  int64_t outer, C, inner;
  int64_t groups;  // blocks' worth of work: groups of `per_group` channels
  int per_group;   // 1 when wide
  bool wide;
};

Tiling tiling(const BnShape& s) {
  const bool wide = s.inner >= kColumns;
  const int per_group = wide ? 1 : int(kColumns / (s.inner > 0 ? s.inner : 1));
  return {s.outer, s.C, s.inner, (s.C + per_group - 1) / per_group, per_group, wide};
}

dim3 tiling_block(const Tiling& t) {
  if (!t.wide) return dim3(kColumns, kThreads / kColumns);
  unsigned bx = kColumns;  // the largest power of two <= inner, up to the whole block
  while (bx * 2 <= unsigned(kThreads) && int64_t(bx) * 2 <= t.inner) bx *= 2;
  return dim3(bx, kThreads / bx);
}

dim3 tiling_grid(const Tiling& t) {
  return dim3(unsigned(t.groups < 2147483647 ? t.groups : 2147483647));
}

// The channels of one group: [c0, c0 + channels), their values in columns
// [0, cols) of every row at row offset c0 * inner.
struct Group {
  int64_t c0;
  int channels, cols;
};

__device__ __forceinline__ Group group_at(const Tiling& t, int64_t g) {
  const int64_t c0 = g * t.per_group;
  const int channels = int(t.C - c0 < t.per_group ? t.C - c0 : t.per_group);
  return {c0, channels, int(t.wide ? 0 : channels * t.inner)};  // cols: narrow only
}

// The channel (within the group) of this thread's values: each thread has one.
__device__ __forceinline__ int my_channel(const Tiling& t, const Group& g) {
  return t.wide || int(threadIdx.x) >= g.cols ? 0 : int(threadIdx.x / t.inner);
}

// Calls f(flat index) for this thread's values of the group.
template <typename F>
__device__ __forceinline__ void for_my_values(const Tiling& t, const Group& g, F f) {
  const int64_t row = t.C * t.inner, first = g.c0 * t.inner;
  if (t.wide) {
    for (int64_t n = threadIdx.y; n < t.outer; n += blockDim.y)
      for (int64_t i = threadIdx.x; i < t.inner; i += blockDim.x) f(n * row + first + i);
  } else if (int(threadIdx.x) < g.cols) {
    for (int64_t n = threadIdx.y; n < t.outer; n += blockDim.y) f(n * row + first + threadIdx.x);
  }
}

// out[k] = the sum over the block of the partials `v` of channel k of the group,
// in a fixed order; every thread may read out[] on return. Called by every
// thread of the block (it has barriers). Shared values in these kernels are
// written by a few threads, then read by all after a barrier, and written again
// only after the next barrier: the kernels need no barrier between groups.
__device__ void channel_sums(const Tiling& t, const Group& g, double v, double* out) {
  __shared__ double partial[kThreads];
  __shared__ double column[kColumns];
  const int tid = int(threadIdx.y * blockDim.x + threadIdx.x);
  if (t.wide) {  // one channel: shuffles within each warp, then the warps' sums in order
    v = warp_sum(v);
    if (tid % 32 == 0) partial[tid / 32] = v;
    __syncthreads();
    if (tid == 0) {
      double total = 0;
      for (int w = 0; w < kThreads / 32; ++w) total += partial[w];
      out[0] = total;
    }
  } else {  // each column down its rows, then each channel across its `inner` columns
    partial[tid] = v;
    __syncthreads();
    if (tid < g.cols) {
      double total = 0;
      for (unsigned r = 0; r < blockDim.y; ++r) total += partial[r * blockDim.x + tid];
      column[tid] = total;
    }
    __syncthreads();
    if (tid < g.channels) {
      double total = 0;
      for (int64_t i = 0; i < t.inner; ++i) total += column[tid * t.inner + i];
      out[tid] = total;
    }
  }
  __syncthreads();
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    bn_forward_training(Tiling t, const T* x, const T* weight, const T* bias, T* running_mean, T* running_var,
                        double momentum, double eps, T* y, T* save_mean, T* save_invstd) {
  __shared__ double sum[kColumns], squares[kColumns];
  __shared__ T mean_t[kColumns], scale_t[kColumns], shift_t[kColumns];
  const double M = double(t.outer * t.inner);
  const int tid = int(threadIdx.y * blockDim.x + threadIdx.x);
  for (int64_t gi = blockIdx.x; gi < t.groups; gi += gridDim.x) {
    const Group g = group_at(t, gi);
    const int k = my_channel(t, g);
    double acc = 0;
    for_my_values(t, g, [&](int64_t i) { acc += double(x[i]); });
    channel_sums(t, g, acc, sum);
    const double my_mean = sum[k] / M;
    acc = 0;
    for_my_values(t, g, [&](int64_t i) {
      const double d = double(x[i]) - my_mean;
      acc += d * d;
    });
    channel_sums(t, g, acc, squares);
    if (tid < g.channels) {
      const int64_t c = g.c0 + tid;
      const double mean = sum[tid] / M, var = squares[tid] / M;  // biased: what normalizes
      const double invstd = 1.0 / sqrt(var + eps);
      save_mean[c] = T(mean);
      save_invstd[c] = T(invstd);
      mean_t[tid] = T(mean);
      scale_t[tid] = T(invstd * (weight ? double(weight[c]) : 1.0));
      shift_t[tid] = bias ? bias[c] : T(0);
      if (running_mean) {  // the unbiased variance, as PyTorch
        running_mean[c] = T((1 - momentum) * double(running_mean[c]) + momentum * mean);
        running_var[c] = T((1 - momentum) * double(running_var[c]) + momentum * squares[tid] / (M - 1));
      }
    }
    __syncthreads();
    const T m = mean_t[k], scale = scale_t[k], shift = shift_t[k];
    for_my_values(t, g, [&](int64_t i) { y[i] = (x[i] - m) * scale + shift; });
  }
}

// dx = w * invstd * (dy - mean(dy) - xhat * mean(dy * xhat)), as the CPU writes it:
// k_dy * dy + (k_x * (x - mean) + k_0); as there, a channel whose coefficients do not fit
// T is computed in double, and one with a non-finite w * invstd is NaN.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    bn_backward(Tiling t, const T* dy, const T* x, const T* weight, const T* save_mean, const T* save_invstd,
                T* dx, T* dweight, T* dbias) {
  __shared__ double sum_dy[kColumns], sum_dy_xc[kColumns];
  __shared__ T k_dy[kColumns], k_x[kColumns], k_0[kColumns];
  __shared__ double w_dy[kColumns], w_x[kColumns], w_0[kColumns];
  __shared__ int exact[kColumns];
  const double M = double(t.outer * t.inner);
  const int tid = int(threadIdx.y * blockDim.x + threadIdx.x);
  for (int64_t gi = blockIdx.x; gi < t.groups; gi += gridDim.x) {
    const Group g = group_at(t, gi);
    const int k = my_channel(t, g);
    const T mean = save_mean[g.c0 + k];
    double a = 0, b = 0;
    for_my_values(t, g, [&](int64_t i) {
      const double d = double(dy[i]);
      a += d;
      b += d * (double(x[i]) - double(mean));
    });
    channel_sums(t, g, a, sum_dy);
    channel_sums(t, g, b, sum_dy_xc);
    if (tid < g.channels) {
      const int64_t c = g.c0 + tid;
      const double invstd = double(save_invstd[c]), w = weight ? double(weight[c]) : 1.0;
      const double sum_dy_xhat = sum_dy_xc[tid] * invstd;
      const double scale = w * invstd, mean_dy = sum_dy[tid] / M, mean_dy_xhat = sum_dy_xhat / M;
      w_dy[tid] = scale;
      w_x[tid] = -scale * mean_dy_xhat * invstd;
      w_0[tid] = -scale * mean_dy;
      k_dy[tid] = T(w_dy[tid]);
      k_x[tid] = T(w_x[tid]);
      k_0[tid] = T(w_0[tid]);
      const double top = sizeof(T) == 4 ? 3.4028234663852886e38 : 1.7976931348623157e308;  // T's max
      exact[tid] = !isfinite(scale) ? 2 : (fabs(w_dy[tid]) > top || fabs(w_x[tid]) > top || fabs(w_0[tid]) > top);
      dweight[c] = T(sum_dy_xhat);
      dbias[c] = T(sum_dy[tid]);
    }
    __syncthreads();
    const T a_dy = k_dy[k], a_x = k_x[k], a_0 = k_0[k];
    if (exact[k] == 0) {
      for_my_values(t, g, [&](int64_t i) { dx[i] = a_dy * dy[i] + (a_x * (x[i] - mean) + a_0); });
    } else if (exact[k] == 1) {
      const double d_dy = w_dy[k], d_x = w_x[k], d_0 = w_0[k], d_mean = double(mean);
      for_my_values(t, g, [&](int64_t i) { dx[i] = T(d_dy * double(dy[i]) + (d_x * (double(x[i]) - d_mean) + d_0)); });
    } else {
      for_my_values(t, g, [&](int64_t i) { dx[i] = T(NAN); });
    }
  }
}

// Column j of the (outer, C * inner) matrix is channel j / inner: one scale per
// thread and column, then rows a stride of gridDim.y * blockDim.y apart.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    bn_forward_inference(int64_t outer, int64_t C, int64_t inner, const T* x, const T* weight, const T* bias,
                         const T* running_mean, const T* running_var, double eps, T* y) {
  const int64_t cols = C * inner;
  for (int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < cols; j += int64_t(gridDim.x) * blockDim.x) {
    const int64_t c = j / inner;
    const double invstd = 1.0 / sqrt(double(running_var[c]) + eps);
    const T scale = T(invstd * (weight ? double(weight[c]) : 1.0)), shift = bias ? bias[c] : T(0);
    const T mean = running_mean[c];
    for (int64_t n = int64_t(blockIdx.y) * blockDim.y + threadIdx.y; n < outer; n += int64_t(gridDim.y) * blockDim.y)
      y[n * cols + j] = (x[n * cols + j] - mean) * scale + shift;
  }
}
}  // namespace

template <typename T>
void batch_norm_forward_training(const BnShape& s, const T* x, const T* weight, const T* bias, T* running_mean,
                                 T* running_var, double momentum, double eps, T* y, T* save_mean, T* save_invstd,
                                 void* stream) {
  if (s.C == 0) return;
  const Tiling t = tiling(s);
  launch("bn_forward_training", bn_forward_training<T>, tiling_grid(t), tiling_block(t), 0,
         static_cast<cudaStream_t>(stream), t, x, weight, bias, running_mean, running_var, momentum, eps, y,
         save_mean, save_invstd);
}

template <typename T>
void batch_norm_forward_inference(const BnShape& s, const T* x, const T* weight, const T* bias,
                                  const T* running_mean, const T* running_var, double eps, T* y, void* stream) {
  if (s.size() == 0) return;
  // About 4 rows per thread; the grid's y dimension is capped at 65535.
  const int64_t cols = s.C * s.inner, rows_per_block = int64_t(kThreads / kColumns) * 4;
  const int64_t gx = (cols + kColumns - 1) / kColumns, gy = (s.outer + rows_per_block - 1) / rows_per_block;
  const dim3 grid(unsigned(gx < 2147483647 ? gx : 2147483647), unsigned(gy < 65535 ? gy : 65535));
  launch("bn_forward_inference", bn_forward_inference<T>, grid, dim3(kColumns, kThreads / kColumns), 0,
         static_cast<cudaStream_t>(stream), s.outer, s.C, s.inner, x, weight, bias, running_mean, running_var, eps,
         y);
}

template <typename T>
void batch_norm_backward(const BnShape& s, const T* dy, const T* x, const T* weight, const T* save_mean,
                         const T* save_invstd, T* dx, T* dweight, T* dbias, void* stream) {
  if (s.C == 0) return;  // (with no values, the sums are 0: dweight and dbias are still written)
  const Tiling t = tiling(s);
  launch("bn_backward", bn_backward<T>, tiling_grid(t), tiling_block(t), 0, static_cast<cudaStream_t>(stream), t, dy,
         x, weight, save_mean, save_invstd, dx, dweight, dbias);
}

#define MINIFW_BN_INSTANTIATE(T)                                                                                  \
  template void batch_norm_forward_training<T>(const BnShape&, const T*, const T*, const T*, T*, T*, double,     \
                                               double, T*, T*, T*, void*);                                       \
  template void batch_norm_forward_inference<T>(const BnShape&, const T*, const T*, const T*, const T*, const T*, \
                                                double, T*, void*);                                              \
  template void batch_norm_backward<T>(const BnShape&, const T*, const T*, const T*, const T*, const T*, T*, T*, \
                                       T*, void*);
MINIFW_BN_INSTANTIATE(float)
MINIFW_BN_INSTANTIATE(double)
#undef MINIFW_BN_INSTANTIATE
}  // namespace MINIFW_CUDA_NS
}  // namespace minifw
