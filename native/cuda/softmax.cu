// Softmax and log-softmax over the middle axis of (outer, C, inner), as
// cpu/softmax.cpp. Two layouts, two kernels:
// - inner == 1 (the rows of an (N, C) matrix): one warp per row; each lane
//   walks the row with a stride of 32 and the warp combines by shuffles.
// - inner > 1 (channels of NCHW): one thread per (outer, inner) position
//   walks the C values a stride of `inner` apart; neighbouring threads read
//   neighbouring addresses.
// Every softmax subtracts the row's maximum first, so no exp overflows.
#include "common.cuh"
#include "softmax.h"

namespace minifw {
namespace MINIFW_CUDA_NS {
namespace {

constexpr unsigned kRowsPerBlock = 4;  // warps per block in the row kernels

template <typename T>
__global__ void softmax_rows_forward(int64_t rows, int64_t C, const T* x, T* y, bool log) {
  const int64_t row = int64_t(blockIdx.x) * kRowsPerBlock + threadIdx.y;
  if (row >= rows) return;  // a whole warp leaves together: no collective is split
  const unsigned lane = threadIdx.x;
  const T* xr = x + row * C;
  T* yr = y + row * C;
  T m = -INFINITY;
  for (int64_t c = lane; c < C; c += 32) m = xr[c] > m ? xr[c] : m;
  m = warp_max(m);
  T sum = 0;
  for (int64_t c = lane; c < C; c += 32) sum += exp(xr[c] - m);
  sum = warp_sum(sum);
  if (log) {  // (x - m) - log(sum), not x - (m + log(sum)): m + log(sum) would round at large m
    const T log_sum = ::log(sum);
    for (int64_t c = lane; c < C; c += 32) yr[c] = (xr[c] - m) - log_sum;
  } else {
    const T inv = T(1) / sum;
    for (int64_t c = lane; c < C; c += 32) yr[c] = exp(xr[c] - m) * inv;
  }
}

// softmax: dx = y * (dy - sum(dy * y)); log-softmax: dx = dy - exp(y) * sum(dy).
template <typename T>
__global__ void softmax_rows_backward(int64_t rows, int64_t C, const T* dy, const T* y, T* dx, bool log) {
  const int64_t row = int64_t(blockIdx.x) * kRowsPerBlock + threadIdx.y;
  if (row >= rows) return;
  const unsigned lane = threadIdx.x;
  const T* g = dy + row * C;
  const T* yr = y + row * C;
  T* d = dx + row * C;
  T dot = 0;
  for (int64_t c = lane; c < C; c += 32) dot += log ? g[c] : g[c] * yr[c];
  dot = warp_sum(dot);
  for (int64_t c = lane; c < C; c += 32) d[c] = log ? g[c] - exp(yr[c]) * dot : yr[c] * (g[c] - dot);
}

template <typename T>
__global__ void softmax_strided_forward(int64_t positions, int64_t C, int64_t inner, const T* x, T* y, bool log) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t p = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; p < positions; p += stride) {
    const int64_t base = (p / inner) * C * inner + p % inner;
    T m = -INFINITY;
    for (int64_t c = 0; c < C; ++c) m = x[base + c * inner] > m ? x[base + c * inner] : m;
    T sum = 0;
    for (int64_t c = 0; c < C; ++c) sum += exp(x[base + c * inner] - m);
    const T log_sum = ::log(sum), inv = T(1) / sum;
    for (int64_t c = 0; c < C; ++c) {
      const T v = x[base + c * inner] - m;
      y[base + c * inner] = log ? v - log_sum : exp(v) * inv;
    }
  }
}

template <typename T>
__global__ void softmax_strided_backward(int64_t positions, int64_t C, int64_t inner, const T* dy, const T* y, T* dx,
                                         bool log) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t p = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; p < positions; p += stride) {
    const int64_t base = (p / inner) * C * inner + p % inner;
    T dot = 0;
    for (int64_t c = 0; c < C; ++c) dot += log ? dy[base + c * inner] : dy[base + c * inner] * y[base + c * inner];
    for (int64_t c = 0; c < C; ++c) {
      const int64_t i = base + c * inner;
      dx[i] = log ? dy[i] - exp(y[i]) * dot : y[i] * (dy[i] - dot);
    }
  }
}

dim3 row_grid(int64_t rows) { return dim3(unsigned((rows + kRowsPerBlock - 1) / kRowsPerBlock)); }
}  // namespace

template <typename T>
void softmax_forward(const SoftmaxShape& s, const T* x, T* y, bool log, void* stream) {
  if (s.size() == 0) return;
  if (s.inner == 1)
    launch("softmax_rows_forward", softmax_rows_forward<T>, row_grid(s.outer), dim3(32, kRowsPerBlock), 0,
           static_cast<cudaStream_t>(stream), s.outer, s.C, x, y, log);
  else
    launch("softmax_strided_forward", softmax_strided_forward<T>, elementwise_grid(s.positions()),
           dim3(kElementwiseThreads), 0, static_cast<cudaStream_t>(stream), s.positions(), s.C, s.inner, x, y, log);
}

template <typename T>
void softmax_backward(const SoftmaxShape& s, const T* dy, const T* y, T* dx, bool log, void* stream) {
  if (s.size() == 0) return;
  if (s.inner == 1)
    launch("softmax_rows_backward", softmax_rows_backward<T>, row_grid(s.outer), dim3(32, kRowsPerBlock), 0,
           static_cast<cudaStream_t>(stream), s.outer, s.C, dy, y, dx, log);
  else
    launch("softmax_strided_backward", softmax_strided_backward<T>, elementwise_grid(s.positions()),
           dim3(kElementwiseThreads), 0, static_cast<cudaStream_t>(stream), s.positions(), s.C, s.inner, dy, y, dx,
           log);
}

template void softmax_forward<float>(const SoftmaxShape&, const float*, float*, bool, void*);
template void softmax_forward<double>(const SoftmaxShape&, const double*, double*, bool, void*);
template void softmax_backward<float>(const SoftmaxShape&, const float*, const float*, float*, bool, void*);
template void softmax_backward<double>(const SoftmaxShape&, const double*, const double*, double*, bool, void*);
}  // namespace MINIFW_CUDA_NS
}  // namespace minifw
