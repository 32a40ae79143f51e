// Bias add, bias gradient and cuDNN-style tensor ops on the GPU, as
// cpu/tensor_ops.cpp.
// - bias_add, add_tensor, scale_tensor: elementwise grid-stride loops.
// - bias_backward: a sum per channel, in double, with a fixed reduction tree
//   (no atomics), so the result does not depend on how blocks are scheduled:
//   for (N, C) matrices a block sums 32 neighbouring columns (each warp reads
//   32 consecutive values of a row), for (N, C, H*W) one block per channel
//   walks its N runs of H*W values (consecutive threads, consecutive
//   addresses). A block per channel is what the layers' channel counts
//   (tens to hundreds) keep busy; splitting a channel over blocks without
//   atomics would need a workspace for the partial sums.
#include "common.cuh"
#include "tensor_ops.h"

namespace minifw {
namespace MINIFW_CUDA_NS {
namespace {

template <typename T>
__global__ void bias_add_kernel(int64_t n, int64_t C, int64_t inner, const T* x, const T* bias, T* y) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = x[i] + bias[(i / inner) % C];
}

constexpr unsigned kColumnTile = 32, kColumnRows = 16;  // bias_backward_columns' block
constexpr unsigned kChannelThreads = 256;               // bias_backward_channels' block

// db[c] = sum over rows of dy[n, c]: thread (x, y) sums rows y, y + 16, ...
// of column c; the 16 partial sums are then added in row order.
template <typename T>
__global__ void bias_backward_columns(int64_t rows, int64_t C, const T* dy, T* db) {
  __shared__ double partial[kColumnRows][kColumnTile + 1];
  const int64_t tiles = (C + kColumnTile - 1) / kColumnTile;
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {  // the same trip count for the whole block
    const int64_t c = tile * kColumnTile + threadIdx.x;
    double acc = 0;
    if (c < C)
      for (int64_t n = threadIdx.y; n < rows; n += kColumnRows) acc += double(dy[n * C + c]);
    partial[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && c < C) {
      double total = 0;
      for (unsigned r = 0; r < kColumnRows; ++r) total += partial[r][threadIdx.x];
      db[c] = T(total);
    }
    __syncthreads();  // partial is refilled for the next tile
  }
}

// db[c] = sum over n, i of dy[n, c, i]: the block's threads take the
// channel's outer * inner values in turn, then a warp-shuffle tree adds them.
template <typename T>
__global__ void bias_backward_channels(int64_t outer, int64_t C, int64_t inner, const T* dy, T* db) {
  __shared__ double warp_sums[kChannelThreads / 32];
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  // Value j of a channel is (n, i) = (j / inner, j % inner); a thread steps j
  // by the block size, i.e. (n, i) by (step_n, step_i), without dividing.
  const int64_t step_n = kChannelThreads / inner, step_i = kChannelThreads % inner;
  for (int64_t c = blockIdx.x; c < C; c += gridDim.x) {
    double acc = 0;
    int64_t n = threadIdx.x / inner, i = threadIdx.x % inner;
    for (; n < outer; n += step_n, i += step_i) {
      if (i >= inner) {
        i -= inner;
        ++n;
        if (n >= outer) break;
      }
      acc += double(dy[(n * C + c) * inner + i]);
    }
    acc = warp_sum(acc);
    if (lane == 0) warp_sums[warp] = acc;
    __syncthreads();
    if (warp == 0) {
      double total = lane < kChannelThreads / 32 ? warp_sums[lane] : 0.0;
      total = warp_sum(total);
      if (lane == 0) db[c] = T(total);
    }
    __syncthreads();  // warp_sums is refilled for the next channel
  }
}

// a's strides (0 along broadcast dimensions) over c's dimensions, merged as
// on the CPU: neighbours along which a is full in both or broadcast in both.
struct Broadcast {
  int nd;
  int64_t dims[8];
  int64_t a_stride[8];
};

template <typename T>
__global__ void add_tensor_kernel(Broadcast b, int64_t total, const T* a, const T* c, T* out, T alpha, T beta) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    int64_t off = 0;  // a's offset: unravel i over the merged dimensions
    int64_t rest = i;
    for (int d = b.nd - 1; d >= 0; --d) {
      off += (rest % b.dims[d]) * b.a_stride[d];
      rest /= b.dims[d];
    }
    const T v = alpha * a[off];
    out[i] = beta == T(0) ? v : v + beta * c[i];  // beta 0: c is not read (it may hold NaN)
  }
}

template <typename T>
__global__ void scale_tensor_kernel(const T* x, T* y, int64_t n, T alpha) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) y[i] = alpha * x[i];
}

unsigned capped_blocks(int64_t n) { return unsigned(n < 1 ? 1 : (n > 65535 ? 65535 : n)); }
}  // namespace

template <typename T>
void bias_add(int64_t outer, int64_t C, int64_t inner, const T* x, const T* bias, T* y, void* stream) {
  const int64_t n = outer * C * inner;
  if (n == 0) return;
  launch("bias_add", bias_add_kernel<T>, elementwise_grid(n), dim3(kElementwiseThreads), 0,
         static_cast<cudaStream_t>(stream), n, C, inner, x, bias, y);
}

template <typename T>
void bias_backward(int64_t outer, int64_t C, int64_t inner, const T* dy, T* db, void* stream) {
  if (C == 0) return;
  const cudaStream_t st = static_cast<cudaStream_t>(stream);
  if (inner == 1)
    launch("bias_backward_columns", bias_backward_columns<T>,
           dim3(capped_blocks((C + kColumnTile - 1) / kColumnTile)), dim3(kColumnTile, kColumnRows), 0, st, outer,
           C, dy, db);
  else  // (inner == 0, an empty plane, sums nothing: every db[c] is 0)
    launch("bias_backward_channels", bias_backward_channels<T>, dim3(capped_blocks(C)), dim3(kChannelThreads), 0,
           st, inner == 0 ? int64_t(0) : outer, C, inner == 0 ? int64_t(1) : inner, dy, db);
}

template <typename T>
void add_tensor(int ndim, const int64_t* shape, const int64_t* a_shape, const T* a, const T* c, T* out, T alpha,
                T beta, void* stream) {
  Broadcast b{};
  bool full[8];
  for (int d = 0; d < ndim; ++d) {
    if (shape[d] == 1) continue;  // indexes nothing
    const bool f = a_shape[d] != 1;
    if (b.nd > 0 && full[b.nd - 1] == f) {
      b.dims[b.nd - 1] *= shape[d];
    } else {
      b.dims[b.nd] = shape[d];
      full[b.nd] = f;
      ++b.nd;
    }
  }
  int64_t step = 1, total = 1;
  for (int d = b.nd - 1; d >= 0; --d) {
    b.a_stride[d] = full[d] ? step : 0;
    if (full[d]) step *= b.dims[d];
    total *= b.dims[d];
  }
  if (total == 0) return;
  launch("add_tensor", add_tensor_kernel<T>, elementwise_grid(total), dim3(kElementwiseThreads), 0,
         static_cast<cudaStream_t>(stream), b, total, a, c, out, alpha, beta);
}

template <typename T>
void scale_tensor(const T* x, T* y, int64_t n, T alpha, void* stream) {
  if (n == 0) return;
  launch("scale_tensor", scale_tensor_kernel<T>, elementwise_grid(n), dim3(kElementwiseThreads), 0,
         static_cast<cudaStream_t>(stream), x, y, n, alpha);
}

#define MINIFW_TENSOR_OPS_INSTANTIATE(T)                                                                     \
  template void bias_add<T>(int64_t, int64_t, int64_t, const T*, const T*, T*, void*);                      \
  template void bias_backward<T>(int64_t, int64_t, int64_t, const T*, T*, void*);                            \
  template void add_tensor<T>(int, const int64_t*, const int64_t*, const T*, const T*, T*, T, T, void*);    \
  template void scale_tensor<T>(const T*, T*, int64_t, T, void*);
MINIFW_TENSOR_OPS_INSTANTIATE(float)
MINIFW_TENSOR_OPS_INSTANTIATE(double)
#undef MINIFW_TENSOR_OPS_INSTANTIATE
}  // namespace MINIFW_CUDA_NS
}  // namespace minifw
