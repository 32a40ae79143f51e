// Elementwise activations on the GPU: one grid-stride loop per direction, the
// mode a kernel parameter. Same formulas, branches and NaN behaviour as
// cpu/activation.cpp: the backward reads the forward output y, and x only
// where y cannot tell the branch.
#include "common.cuh"
#include "activation.h"

namespace minifw {
namespace MINIFW_CUDA_NS {
namespace {

template <typename T>
__device__ __forceinline__ T activate(ActMode mode, T v, T slope, T alpha) {
  switch (mode) {
    case ActMode::relu: return v < T(0) ? T(0) : v;  // (v < 0) is false for NaN: NaN passes through
    case ActMode::leaky_relu: return v > T(0) ? v : v * slope;
    case ActMode::relu6: {
      const T r = v < T(0) ? T(0) : v;
      return r > T(6) ? T(6) : r;
    }
    case ActMode::sigmoid: return T(1) / (T(1) + exp(-v));
    case ActMode::tanh: return tanh(v);
    case ActMode::elu: return v > T(0) ? v : alpha * expm1(v);
  }
  return v;
}

// `branch` is x when the forward input is needed, else y (same sign as x).
template <typename T>
__device__ __forceinline__ T derivative_times(ActMode mode, T g, T y, T branch, T slope, T alpha) {
  switch (mode) {
    case ActMode::relu: return branch > T(0) ? g : T(0);
    case ActMode::leaky_relu: return branch > T(0) ? g : g * slope;
    case ActMode::relu6: return (y > T(0) && y < T(6)) ? g : T(0);
    case ActMode::sigmoid: return g * y * (T(1) - y);
    case ActMode::tanh: return g * (T(1) - y * y);
    case ActMode::elu: return branch > T(0) ? g : g * (y + alpha);  // d/dx alpha * (exp(x) - 1) = y + alpha
  }
  return g;
}

template <typename T>
__global__ void activation_forward_kernel(ActMode mode, const T* x, T* y, int64_t n, T slope, T alpha) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = activate(mode, x[i], slope, alpha);
}

template <typename T>
__global__ void activation_backward_kernel(ActMode mode, const T* dy, const T* y, const T* x, T* dx, int64_t n,
                                           T slope, T alpha) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const T yi = y[i];
    dx[i] = derivative_times(mode, dy[i], yi, x ? x[i] : yi, slope, alpha);
  }
}
}  // namespace

template <typename T>
void activation_forward(const ActParams& p, const T* x, T* y, int64_t n, void* stream) {
  if (n == 0) return;
  launch("activation_forward", activation_forward_kernel<T>, elementwise_grid(n), dim3(kElementwiseThreads), 0,
         static_cast<cudaStream_t>(stream), p.mode, x, y, n, T(p.negative_slope), T(p.alpha));
}

template <typename T>
void activation_backward(const ActParams& p, const T* dy, const T* y, const T* x, T* dx, int64_t n, void* stream) {
  if (activation_backward_needs_x(p) && !x)
    throw std::invalid_argument("activation_backward: this mode needs the forward input x");
  if (n == 0) return;
  launch("activation_backward", activation_backward_kernel<T>, elementwise_grid(n), dim3(kElementwiseThreads), 0,
         static_cast<cudaStream_t>(stream), p.mode, dy, y, x, dx, n, T(p.negative_slope), T(p.alpha));
}

template void activation_forward<float>(const ActParams&, const float*, float*, int64_t, void*);
template void activation_forward<double>(const ActParams&, const double*, double*, int64_t, void*);
template void activation_backward<float>(const ActParams&, const float*, const float*, const float*, float*,
                                         int64_t, void*);
template void activation_backward<double>(const ActParams&, const double*, const double*, const double*,
                                          double*, int64_t, void*);
}  // namespace MINIFW_CUDA_NS
}  // namespace minifw
