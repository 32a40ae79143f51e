// What every CUDA kernel file includes. The same .cu sources are compiled twice:
// by nvcc for the GPU (namespace minifw::cuda) and by the host C++ compiler
// against cudasim for device "cudasim" (namespace minifw::cudasim). Write
// kernels in plain CUDA C++; launch them with launch("name", kernel, grid,
// block, shared_bytes, stream, args...) rather than <<<...>>>, which the host
// compiler cannot parse; get dynamic shared memory from dynamic_shared<T>().
#pragma once
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <tuple>

#ifdef __CUDACC__
#include <cuda_runtime.h>
#define MINIFW_CUDA_NS cuda
#else
#include "cudasim/cudasim.h"
#define MINIFW_CUDA_NS cudasim
#endif

namespace minifw {
namespace MINIFW_CUDA_NS {

#ifdef __CUDACC__
// A failed launch or a fault while it ran (caught at the next check); the
// binding turns it into a Python RuntimeError.
inline void check(cudaError_t status, const char* kernel) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string("CUDA error in kernel ") + kernel + ": " + cudaGetErrorName(status) + ": " +
                             cudaGetErrorString(status));
}

template <class... P, class... A>
void launch(const char* name, void (*kernel)(P...), dim3 grid, dim3 block, size_t shared_bytes, cudaStream_t stream,
            A&&... args) {
  static_assert(sizeof...(P) == sizeof...(A), "wrong number of kernel arguments");
  std::tuple<P...> params(static_cast<P>(args)...);
  void* argv[sizeof...(P) + 1];
  std::apply([&argv](auto&... p) {
    size_t i = 0;
    ((argv[i++] = static_cast<void*>(&p)), ...);
  }, params);
  check(cudaLaunchKernel(reinterpret_cast<const void*>(kernel), grid, block, argv, shared_bytes, stream), name);
}

template <class T>
__device__ __forceinline__ T* dynamic_shared() {
  extern __shared__ __align__(16) unsigned char minifw_dynamic_shared[];
  return reinterpret_cast<T*>(minifw_dynamic_shared);
}
#else
using ::cudasim::launch;
using ::cudasim::dynamic_shared;
#endif

// Threads for an elementwise kernel over n elements: 256 per block, blocks
// capped so a grid-stride loop covers the rest.
constexpr unsigned kElementwiseThreads = 256;
inline dim3 elementwise_grid(int64_t n) {
  const int64_t blocks = (n + kElementwiseThreads - 1) / kElementwiseThreads;
  return dim3(unsigned(blocks < 1 ? 1 : (blocks > 65535 ? 65535 : blocks)));
}

// Full-warp reductions by butterfly shuffles; every lane gets the result.
template <class T>
__device__ __forceinline__ T warp_sum(T v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}
template <class T>
__device__ __forceinline__ T warp_max(T v) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    const T other = __shfl_xor_sync(0xffffffffu, v, offset);
    v = other > v ? other : v;
  }
  return v;
}

}  // namespace MINIFW_CUDA_NS
}  // namespace minifw
