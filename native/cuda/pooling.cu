// 2-D max and average pooling on the GPU, NCHW, with the semantics of
// cpu/pooling.cpp (PyTorch's: windows clipped to the padded input, the first
// maximum in row-major order, a NaN counting as the maximum, the divisor of
// count_include_pad or of the elements covered).
//
// Forward: one thread per output element (Caffe's and cuDNN's layout):
// neighbouring threads take neighbouring windows of one row.
//
// Backward: one thread per input element gathers from the outputs whose
// windows hold it, so overlapping windows need no atomics and each element is
// written once; max pooling adds dy where the output's index names this
// element, in ascending output order, as the CPU kernel's scatter does (the
// same bits). That gather finds an index only inside its own window, which is
// where every forward puts it; indices from elsewhere (still inside the plane)
// are routed like the CPU does by a per-plane scatter that runs instead, and
// indices outside the plane are skipped and reported (see pooling.h).
#include "common.cuh"
#include "pooling.h"

namespace minifw {
namespace MINIFW_CUDA_NS {
namespace {

__device__ __forceinline__ int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
__device__ __forceinline__ int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

// (PoolShape's member functions are host code: kernels use its fields.)

// The first tap at or past 0 of a window of k taps d apart starting at `start`.
__device__ __forceinline__ int64_t first_tap_inside(int64_t start, int64_t d) {
  return start >= 0 ? start : start + (-start + d - 1) / d * d;
}

// The taps of output (oh, ow) inside the input: rows hs, hs + dh, ... below he,
// columns ws, ws + dw, ... below we (the dilation is 1 for average pooling).
struct Window {
  int64_t hs, he, ws, we;
};
__device__ __forceinline__ Window window_of(const PoolShape& s, int64_t oh, int64_t ow) {
  const int64_t h0 = oh * s.sh - s.ph, w0 = ow * s.sw - s.pw;
  return {first_tap_inside(h0, s.dh), min64(h0 + s.dh * (s.kh - 1) + 1, s.H), first_tap_inside(w0, s.dw),
          min64(w0 + s.dw * (s.kw - 1) + 1, s.W)};
}

// Rows (or columns) an average divides by along one axis: the window clipped
// to the padded input, or to the input.
__device__ __forceinline__ int64_t divisor_extent(int64_t o, int64_t k, int64_t st, int64_t p, int64_t size,
                                                  bool include_pad) {
  const int64_t start = o * st - p;
  return include_pad ? min64(start + k, size + p) - start : min64(start + k, size) - max64(start, 0);
}

// The outputs along one axis whose windows span input position i: [first, last]
// (empty when first > last). Output o spans [o * st - p, o * st - p + k) (k the
// dilated extent d (k - 1) + 1 where taps lie d apart: a superset of the
// outputs with a tap on i).
__device__ __forceinline__ void covering_outputs(int64_t i, int64_t k, int64_t st, int64_t p, int64_t n_out,
                                                 int64_t& first, int64_t& last) {
  const int64_t lowest = i + p - k + 1;  // o * st >= lowest
  first = lowest <= 0 ? 0 : (lowest + st - 1) / st;
  last = min64((i + p) / st, n_out - 1);
}

template <typename T>
__global__ void pool_forward_kernel(PoolShape s, PoolMode mode, const T* x, T* y, int64_t* indices) {
  const int64_t out = s.Ho * s.Wo, total = s.N * s.C * out;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int64_t q = i / out, o = i - q * out, oh = o / s.Wo, ow = o - oh * s.Wo;
    const Window win = window_of(s, oh, ow);
    const T* plane = x + q * s.H * s.W;
    if (mode == PoolMode::max) {
      T best = -INFINITY;
      int64_t best_index = win.hs * s.W + win.ws;  // PyTorch's choice when every value is -inf
      for (int64_t r = win.hs; r < win.he; r += s.dh)
        for (int64_t c = win.ws; c < win.we; c += s.dw) {
          const T v = plane[r * s.W + c];
          if (v > best || (v != v && best == best)) {  // a NaN wins; the first one stays
            best = v;
            best_index = r * s.W + c;
          }
        }
      y[i] = best;
      if (indices) indices[i] = best_index;
    } else {
      const bool include_pad = mode == PoolMode::avg_include_pad;
      T sum = 0;
      for (int64_t r = win.hs; r < win.he; ++r)
        for (int64_t c = win.ws; c < win.we; ++c) sum += plane[r * s.W + c];
      // The area as a product of Ts: a heavily padded window's (2^80) cannot wrap.
      y[i] = sum / (T(divisor_extent(oh, s.kh, s.sh, s.ph, s.H, include_pad)) *
                    T(divisor_extent(ow, s.kw, s.sw, s.pw, s.W, include_pad)));
    }
  }
}

template <typename T>
__global__ void pool_backward_avg_kernel(PoolShape s, bool include_pad, const T* dy, T* dx) {
  const int64_t in = s.H * s.W, out = s.Ho * s.Wo, total = s.N * s.C * in;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int64_t q = i / in, k = i - q * in, h = k / s.W, w = k - h * s.W;
    int64_t oh0, oh1, ow0, ow1;
    covering_outputs(h, s.kh, s.sh, s.ph, s.Ho, oh0, oh1);
    covering_outputs(w, s.kw, s.sw, s.pw, s.Wo, ow0, ow1);
    const T* g = dy + q * out;
    T sum = 0;
    for (int64_t oh = oh0; oh <= oh1; ++oh) {
      const T rows = T(divisor_extent(oh, s.kh, s.sh, s.ph, s.H, include_pad));
      for (int64_t ow = ow0; ow <= ow1; ++ow)
        sum += g[oh * s.Wo + ow] / (rows * T(divisor_extent(ow, s.kw, s.sw, s.pw, s.W, include_pad)));
    }
    dx[i] = sum;
  }
}

__global__ void pool_status_clear(long long* status) {
  for (int w = 0; w < kPoolStatusWords; ++w) status[w] = 0;
}

// status[0]: LLONG_MAX - (first position of an index outside the plane);
// status[1]: 1 when some index inside the plane lies outside its own window's span.
__global__ void pool_check_indices(PoolShape s, const int64_t* indices, long long* status) {
  const int64_t in = s.H * s.W, out = s.Ho * s.Wo, total = s.N * s.C * out;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int64_t k = indices[i];
    if (uint64_t(k) >= uint64_t(in)) {  // negative ones too
      atomicMax(&status[0], LLONG_MAX - (long long)i);
      continue;
    }
    const int64_t o = i % out, oh = o / s.Wo, ow = o - oh * s.Wo, h = k / s.W, w = k - h * s.W;
    const Window win = window_of(s, oh, ow);
    if (h < win.hs || h >= win.he || w < win.ws || w >= win.we) atomicMax(&status[1], 1LL);
  }
}

template <typename T>
__global__ void pool_backward_max_gather(PoolShape s, const T* dy, const int64_t* indices, T* dx,
                                         const long long* status) {
  if (status[1]) return;  // the scatter below does it
  const int64_t in = s.H * s.W, out = s.Ho * s.Wo, total = s.N * s.C * in;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int64_t q = i / in, k = i - q * in, h = k / s.W, w = k - h * s.W;
    int64_t oh0, oh1, ow0, ow1;
    covering_outputs(h, s.dh * (s.kh - 1) + 1, s.sh, s.ph, s.Ho, oh0, oh1);
    covering_outputs(w, s.dw * (s.kw - 1) + 1, s.sw, s.pw, s.Wo, ow0, ow1);
    const T* g = dy + q * out;
    const int64_t* idx = indices + q * out;
    T sum = 0;
    for (int64_t oh = oh0; oh <= oh1; ++oh)
      for (int64_t ow = ow0; ow <= ow1; ++ow)
        if (idx[oh * s.Wo + ow] == k) sum += g[oh * s.Wo + ow];
    dx[i] = sum;
  }
}

// Only for indices the forward cannot have made: one thread per plane routes
// dy in output order, exactly as the CPU kernel.
template <typename T>
__global__ void pool_backward_max_scatter(PoolShape s, const T* dy, const int64_t* indices, T* dx,
                                          const long long* status) {
  if (!status[1]) return;
  const int64_t in = s.H * s.W, out = s.Ho * s.Wo;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t q = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; q < s.N * s.C; q += stride) {
    T* d = dx + q * in;
    for (int64_t k = 0; k < in; ++k) d[k] = T(0);
    for (int64_t o = 0; o < out; ++o) {
      const int64_t k = indices[q * out + o];
      if (uint64_t(k) < uint64_t(in)) d[k] += dy[q * out + o];
    }
  }
}
}  // namespace

template <typename T>
void pool_forward(const PoolShape& s, PoolMode mode, const T* x, T* y, int64_t* indices, void* stream) {
  const int64_t total = s.y_size();
  if (total == 0) return;
  launch("pool_forward", pool_forward_kernel<T>, elementwise_grid(total), dim3(kElementwiseThreads), 0,
         static_cast<cudaStream_t>(stream), s, mode, x, y, mode == PoolMode::max ? indices : nullptr);
}

template <typename T>
void pool_backward(const PoolShape& s, PoolMode mode, const T* dy, const int64_t* indices, T* dx,
                   long long* status, void* stream) {
  const cudaStream_t st = static_cast<cudaStream_t>(stream);
  launch("pool_status_clear", pool_status_clear, dim3(1), dim3(1), 0, st, status);
  if (s.x_size() == 0) return;
  const dim3 input_grid = elementwise_grid(s.x_size()), block(kElementwiseThreads);
  if (mode != PoolMode::max) {
    launch("pool_backward_avg", pool_backward_avg_kernel<T>, input_grid, block, 0, st, s,
           mode == PoolMode::avg_include_pad, dy, dx);
    return;
  }
  launch("pool_check_indices", pool_check_indices, elementwise_grid(s.y_size()), block, 0, st, s, indices, status);
  launch("pool_backward_max_gather", pool_backward_max_gather<T>, input_grid, block, 0, st, s, dy, indices, dx,
         status);
  launch("pool_backward_max_scatter", pool_backward_max_scatter<T>, elementwise_grid(s.planes()), block, 0, st, s,
         dy, indices, dx, status);
}

template void pool_forward<float>(const PoolShape&, PoolMode, const float*, float*, int64_t*, void*);
template void pool_forward<double>(const PoolShape&, PoolMode, const double*, double*, int64_t*, void*);
template void pool_backward<float>(const PoolShape&, PoolMode, const float*, const int64_t*, float*, long long*,
                                   void*);
template void pool_backward<double>(const PoolShape&, PoolMode, const double*, const int64_t*, double*, long long*,
                                    void*);
}  // namespace MINIFW_CUDA_NS
}  // namespace minifw
