// Softmax and log-softmax over the middle axis of (outer, C, inner), as
// cpu/softmax.cpp. Two layouts, two kernels:
// - inner == 1 (the rows of an (N, C) matrix): one warp per row; each lane
//   walks the row with a stride of 32 and the warp combines by shuffles.
// - inner > 1 (channels of NCHW): one thread per (outer, inner) position
//   walks the C values a stride of `inner` apart; neighbouring threads read
//   neighbouring addresses.
// Every softmax subtracts the row's maximum first, so no exp overflows.
// Cross-entropy (below) runs on the log-softmax of these kernels.
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

// ---- cross-entropy -----------------------------------------------------------
// Fused with log-softmax as on the CPU: log_probs by the kernels above, then per
// position loss = (1 - eps) * -log_probs[t] + eps / C * -sum_c log_probs[c] (0
// where t is ignore_index or out of range), in the same two layouts; then one
// block reduces the per-position results in a fixed order. The backward writes
// dlogits = g * (exp(log_probs) - eps / C), minus g * (1 - eps) at the target.

constexpr unsigned kTotalsThreads = 512;

__device__ __forceinline__ bool target_ok(int64_t t, int64_t C, int64_t ignore_index) {
  return t == ignore_index || (t >= 0 && t < C);
}

// Rows: a warp per row (a row's target is the same for all its lanes, so
// whole warps take each branch), a grid-stride loop over the rows.
template <typename T>
__global__ void cross_entropy_rows_loss(int64_t rows, int64_t C, const T* log_probs, const int64_t* target,
                                        int64_t ignore_index, T keep, T spread, T* losses) {
  const unsigned lane = threadIdx.x;
  for (int64_t row = int64_t(blockIdx.x) * kRowsPerBlock + threadIdx.y; row < rows;
       row += int64_t(gridDim.x) * kRowsPerBlock) {
    const int64_t t = target[row];
    const T* lp = log_probs + row * C;
    if (t == ignore_index || !target_ok(t, C, ignore_index)) {
      if (lane == 0) losses[row] = T(0);
      continue;
    }
    T sum = 0;
    for (int64_t c = lane; c < C; c += 32) sum += lp[c];
    sum = warp_sum(sum);
    if (lane == 0) losses[row] = keep * -lp[t] + spread * -sum;
  }
}

template <typename T>
__global__ void cross_entropy_strided_loss(int64_t positions, int64_t C, int64_t inner, const T* log_probs,
                                           const int64_t* target, int64_t ignore_index, T keep, T spread,
                                           T* losses) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t p = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; p < positions; p += stride) {
    const int64_t t = target[p];
    if (t == ignore_index || !target_ok(t, C, ignore_index)) {
      losses[p] = T(0);
      continue;
    }
    const T* lp = log_probs + (p / inner) * C * inner + p % inner;
    T neg_sum = 0;
    for (int64_t c = 0; c < C; ++c) neg_sum -= lp[c * inner];
    losses[p] = keep * -lp[t * inner] + spread * neg_sum;
  }
}

__device__ __forceinline__ int64_t warp_min(int64_t v) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    const int64_t other = __shfl_xor_sync(0xffffffffu, v, offset);
    v = other < v ? other : v;
  }
  return v;
}

// One block: the sum of the losses (when given) in double, the count of
// targets that are not ignore_index, the first out-of-range position (-1: none).
// Each thread's positions ascend, so its first bad one is its smallest. The
// threads' partials go through shared memory to the first warp, whose lanes
// add them in a fixed order and finish with shuffles.
template <typename T>
__global__ void __launch_bounds__(kTotalsThreads)
    cross_entropy_totals(int64_t positions, int64_t C, const int64_t* target, int64_t ignore_index, const T* losses,
                         CrossEntropySums* sums) {
  constexpr int64_t kNone = INT64_MAX;
  __shared__ double part_loss[kTotalsThreads];
  __shared__ int64_t part_count[kTotalsThreads], part_bad[kTotalsThreads];
  double loss = 0;
  int64_t count = 0, bad = kNone;
  for (int64_t p = threadIdx.x; p < positions; p += blockDim.x) {
    const int64_t t = target[p];
    if (losses) loss += double(losses[p]);
    count += t != ignore_index;
    if (bad == kNone && !target_ok(t, C, ignore_index)) bad = p;
  }
  part_loss[threadIdx.x] = loss, part_count[threadIdx.x] = count, part_bad[threadIdx.x] = bad;
  __syncthreads();
  if (threadIdx.x >= 32) return;  // (no barrier follows)
  for (unsigned i = threadIdx.x + 32; i < blockDim.x; i += 32) {
    loss += part_loss[i];
    count += part_count[i];
    bad = part_bad[i] < bad ? part_bad[i] : bad;
  }
  loss = warp_sum(loss);
  count = warp_sum(count);
  bad = warp_min(bad);
  if (threadIdx.x == 0) {
    sums->loss_sum = loss;
    sums->count = count;
    sums->bad_position = bad == kNone ? -1 : bad;
  }
}

// The gradient scale of every position when no per-position grad is given:
// grad_scalar, over the count of non-ignored targets for the mean (as the CPU:
// the division in double, then the rounding to T).
template <typename T>
__device__ __forceinline__ T scalar_grad(double grad_scalar, bool divide_by_count, const CrossEntropySums* sums) {
  return T(divide_by_count ? grad_scalar / double(sums->count) : grad_scalar);
}

template <typename T>
__global__ void cross_entropy_rows_backward(int64_t rows, int64_t C, const T* log_probs, const int64_t* target,
                                            int64_t ignore_index, T keep, T spread, const T* grad,
                                            double grad_scalar, bool divide_by_count, const CrossEntropySums* sums,
                                            T* dlogits) {
  const unsigned lane = threadIdx.x;
  const T g_all = grad ? T(0) : scalar_grad<T>(grad_scalar, divide_by_count, sums);
  for (int64_t row = int64_t(blockIdx.x) * kRowsPerBlock + threadIdx.y; row < rows;
       row += int64_t(gridDim.x) * kRowsPerBlock) {
    const int64_t t = target[row];
    const T* lp = log_probs + row * C;
    T* d = dlogits + row * C;
    if (t == ignore_index || !target_ok(t, C, ignore_index)) {
      for (int64_t c = lane; c < C; c += 32) d[c] = T(0);  // exactly 0, even where log_probs holds inf or nan
      continue;
    }
    const T g = grad ? grad[row] : g_all;
    for (int64_t c = lane; c < C; c += 32) {
      T v = g * (exp(lp[c]) - spread);
      if (c == t) v -= g * keep;
      d[c] = v;
    }
  }
}

template <typename T>
__global__ void cross_entropy_strided_backward(int64_t positions, int64_t C, int64_t inner, const T* log_probs,
                                               const int64_t* target, int64_t ignore_index, T keep, T spread,
                                               const T* grad, double grad_scalar, bool divide_by_count,
                                               const CrossEntropySums* sums, T* dlogits) {
  const T g_all = grad ? T(0) : scalar_grad<T>(grad_scalar, divide_by_count, sums);
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t p = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; p < positions; p += stride) {
    const int64_t t = target[p], base = (p / inner) * C * inner + p % inner;
    if (t == ignore_index || !target_ok(t, C, ignore_index)) {
      for (int64_t c = 0; c < C; ++c) dlogits[base + c * inner] = T(0);
      continue;
    }
    const T g = grad ? grad[p] : g_all;
    for (int64_t c = 0; c < C; ++c) {
      T v = g * (exp(log_probs[base + c * inner]) - spread);
      if (c == t) v -= g * keep;
      dlogits[base + c * inner] = v;
    }
  }
}

// Warps of the row kernels: the grid-stride loop covers rows past 2^31 blocks' worth.
dim3 capped_row_grid(int64_t rows) {
  const int64_t blocks = (rows + kRowsPerBlock - 1) / kRowsPerBlock;
  return dim3(unsigned(blocks < 2147483647 ? blocks : 2147483647));
}
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

template <typename T>
void cross_entropy_forward(const SoftmaxShape& s, const T* logits, const int64_t* target, int64_t ignore_index,
                           double label_smoothing, T* log_probs, T* losses, CrossEntropySums* sums, void* stream) {
  const cudaStream_t st = static_cast<cudaStream_t>(stream);
  const T keep = T(1 - label_smoothing), spread = T(label_smoothing / s.C);
  softmax_forward(s, logits, log_probs, true, stream);
  if (s.positions() > 0) {
    if (s.inner == 1)
      launch("cross_entropy_rows_loss", cross_entropy_rows_loss<T>, capped_row_grid(s.outer), dim3(32, kRowsPerBlock),
             0, st, s.outer, s.C, log_probs, target, ignore_index, keep, spread, losses);
    else
      launch("cross_entropy_strided_loss", cross_entropy_strided_loss<T>, elementwise_grid(s.positions()),
             dim3(kElementwiseThreads), 0, st, s.positions(), s.C, s.inner, log_probs, target, ignore_index, keep,
             spread, losses);
  }
  // Launched even for no positions: it writes the (empty) totals.
  launch("cross_entropy_totals", cross_entropy_totals<T>, dim3(1), dim3(kTotalsThreads), 0, st, s.positions(), s.C,
         target, ignore_index, static_cast<const T*>(losses), sums);
}

template <typename T>
void cross_entropy_backward(const SoftmaxShape& s, const T* log_probs, const int64_t* target, int64_t ignore_index,
                            double label_smoothing, const T* grad, double grad_scalar, bool divide_by_count,
                            T* dlogits, CrossEntropySums* sums, void* stream) {
  const cudaStream_t st = static_cast<cudaStream_t>(stream);
  const T keep = T(1 - label_smoothing), spread = T(label_smoothing / s.C);
  // The count (for the mean) and the first bad position, before dlogits reads the count.
  launch("cross_entropy_totals", cross_entropy_totals<T>, dim3(1), dim3(kTotalsThreads), 0, st, s.positions(), s.C,
         target, ignore_index, static_cast<const T*>(nullptr), sums);
  if (s.positions() == 0) return;
  if (s.inner == 1)
    launch("cross_entropy_rows_backward", cross_entropy_rows_backward<T>, capped_row_grid(s.outer),
           dim3(32, kRowsPerBlock), 0, st, s.outer, s.C, log_probs, target, ignore_index, keep, spread, grad,
           grad_scalar, divide_by_count, static_cast<const CrossEntropySums*>(sums), dlogits);
  else
    launch("cross_entropy_strided_backward", cross_entropy_strided_backward<T>, elementwise_grid(s.positions()),
           dim3(kElementwiseThreads), 0, st, s.positions(), s.C, s.inner, log_probs, target, ignore_index, keep,
           spread, grad, grad_scalar, divide_by_count, static_cast<const CrossEntropySums*>(sums), dlogits);
}

template void softmax_forward<float>(const SoftmaxShape&, const float*, float*, bool, void*);
template void softmax_forward<double>(const SoftmaxShape&, const double*, double*, bool, void*);
template void softmax_backward<float>(const SoftmaxShape&, const float*, const float*, float*, bool, void*);
template void softmax_backward<double>(const SoftmaxShape&, const double*, const double*, double*, bool, void*);
template void cross_entropy_forward<float>(const SoftmaxShape&, const float*, const int64_t*, int64_t, double,
                                           float*, float*, CrossEntropySums*, void*);
template void cross_entropy_forward<double>(const SoftmaxShape&, const double*, const int64_t*, int64_t, double,
                                            double*, double*, CrossEntropySums*, void*);
template void cross_entropy_backward<float>(const SoftmaxShape&, const float*, const int64_t*, int64_t, double,
                                            const float*, double, bool, float*, CrossEntropySums*, void*);
template void cross_entropy_backward<double>(const SoftmaxShape&, const double*, const int64_t*, int64_t, double,
                                             const double*, double, bool, double*, CrossEntropySums*, void*);
}  // namespace MINIFW_CUDA_NS
}  // namespace minifw
