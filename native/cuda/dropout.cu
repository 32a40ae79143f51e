// Dropout on the GPU with the CPU's counter-based generator (cpu/dropout.h), so
// a seed gives the same mask on every device: one thread per Philox-4x32-10
// counter. Counter k = 16 * b + l serves the b-th run of 64 elements: its four
// output words are those of elements 64 * b + 16 * w + l (w = 0..3), so for each
// w the run's 16 threads (half a warp) write 16 consecutive elements.
#include <cmath>

#include "common.cuh"
#include "dropout.h"

namespace minifw {
namespace MINIFW_CUDA_NS {
namespace {

constexpr uint32_t kPhiloxM0 = 0xD2511F53u, kPhiloxM1 = 0xCD9E8D57u;
constexpr uint32_t kPhiloxW0 = 0x9E3779B9u, kPhiloxW1 = 0xBB67AE85u;

// Philox-4x32-10 (Salmon et al., SC 2011) of the counter (counter, 0) under the
// key (k0, k1); the 32 x 32 -> 64-bit products compile to mul.wide.u32.
__device__ __forceinline__ void philox4x32_10(uint64_t counter, uint32_t k0, uint32_t k1, uint32_t out[4]) {
  uint32_t c0 = uint32_t(counter), c1 = uint32_t(counter >> 32), c2 = 0, c3 = 0;
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = uint64_t(kPhiloxM0) * c0, p1 = uint64_t(kPhiloxM1) * c2;
    const uint32_t n0 = uint32_t(p1 >> 32) ^ c1 ^ k0, n2 = uint32_t(p0 >> 32) ^ c3 ^ k1;
    c1 = uint32_t(p1);
    c3 = uint32_t(p0);
    c0 = n0;
    c2 = n2;
    k0 += kPhiloxW0;
    k1 += kPhiloxW1;
  }
  out[0] = c0, out[1] = c1, out[2] = c2, out[3] = c3;
}

template <typename T>
__global__ void dropout_philox_forward(const T* x, T* y, uint8_t* mask, int64_t n, int64_t counters,
                                       uint32_t threshold, T scale, uint64_t seed) {
  const uint32_t k0 = uint32_t(seed), k1 = uint32_t(seed >> 32);
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t k = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < counters; k += stride) {
    uint32_t words[4];
    philox4x32_10(uint64_t(k), k0, k1, words);
    const int64_t first = (k / 16) * 64 + k % 16;
    for (int w = 0; w < 4; ++w) {
      const int64_t i = first + 16 * w;
      if (i >= n) break;
      const bool keep = words[w] >= threshold;
      mask[i] = keep ? 1 : 0;
      y[i] = x[i] * (keep ? scale : T(0));  // as the CPU: a dropped inf or nan gives nan
    }
  }
}

// p = 0 (keep everything: y = x) or p = 1 (y = 0 exactly, even for inf and nan).
template <typename T>
__global__ void dropout_fill(const T* x, T* y, uint8_t* mask, int64_t n, bool keep) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    mask[i] = keep ? 1 : 0;
    y[i] = keep ? x[i] : T(0);
  }
}

template <typename T>
__global__ void dropout_backward_kernel(const T* dy, const uint8_t* mask, T* dx, int64_t n, T scale) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    dx[i] = dy[i] * (mask[i] ? scale : T(0));
}

template <typename T>
T keep_scale(double p) {
  return p < 1 ? T(1.0 / (1.0 - p)) : T(0);
}
}  // namespace

template <typename T>
void dropout_forward(const T* x, T* y, uint8_t* mask, int64_t n, double p, uint64_t seed, void* stream) {
  if (n == 0) return;
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (p >= 1 || p <= 0) {  // nothing random: no division by zero, no generator
    launch("dropout_fill", dropout_fill<T>, elementwise_grid(n), dim3(kElementwiseThreads), 0, s, x, y, mask, n,
           p <= 0);
    return;
  }
  const uint32_t threshold = uint32_t(std::floor(p * 4294967296.0));  // < 2^32 since p < 1
  const int64_t counters = (n + 63) / 64 * 16;
  launch("dropout_philox_forward", dropout_philox_forward<T>, elementwise_grid(counters),
         dim3(kElementwiseThreads), 0, s, x, y, mask, n, counters, threshold, keep_scale<T>(p), seed);
}

template <typename T>
void dropout_backward(const T* dy, const uint8_t* mask, T* dx, int64_t n, double p, void* stream) {
  if (n == 0) return;
  launch("dropout_backward", dropout_backward_kernel<T>, elementwise_grid(n), dim3(kElementwiseThreads), 0,
         static_cast<cudaStream_t>(stream), dy, mask, dx, n, keep_scale<T>(p));
}

template void dropout_forward<float>(const float*, float*, uint8_t*, int64_t, double, uint64_t, void*);
template void dropout_forward<double>(const double*, double*, uint8_t*, int64_t, double, uint64_t, void*);
template void dropout_backward<float>(const float*, const uint8_t*, float*, int64_t, double, void*);
template void dropout_backward<double>(const double*, const uint8_t*, double*, int64_t, double, void*);
}  // namespace MINIFW_CUDA_NS
}  // namespace minifw
