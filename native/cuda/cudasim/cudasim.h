// cudasim: minifw's CUDA-on-CPU layer. The kernels in native/cuda/*.cu are
// compiled by nvcc for the GPU and, with this header in place of
// cuda_runtime.h, by the host C++ compiler for device "cudasim", so every
// kernel and launcher is executed and checked on machines without a GPU.
//
// Execution model (fibers.cpp; threads.cpp is the ThreadSanitizer backend,
// see there). Each CUDA thread of a block is a fiber (its own stack) run
// on one OS thread until it reaches a barrier, a warp collective or its end;
// then the next fiber runs. When no fiber can run, the scheduler checks and
// releases what they wait at: a warp collective once every lane named in its
// mask is there, __syncthreads once every thread of the block is there. Blocks
// run one after another on each of minifw's worker threads (a __shared__
// variable is one per OS thread, so one per running block).
//
// What it enforces, as the hardware or the CUDA programming guide requires
// (a violation raises cudasim::Fault naming the kernel, block and thread; the
// Python binding turns it into minifw.CudaSimError):
// - launch limits: 1..1024 threads per block (x, y <= 1024, z <= 64), grid
//   x < 2^31, y and z <= 65535, dynamic shared memory within 48 KiB unless
//   cudaFuncSetAttribute raised the kernel's limit (at most 227 KiB);
// - __syncthreads reached by every thread of the block, at the same call site
//   (an early return before a barrier, or a barrier in divergent code, is an
//   error, not a hang);
// - warp collectives (__shfl*_sync, __ballot/any/all_sync, __syncwarp): the
//   calling lane is in the mask, every lane the mask names exists, has not
//   exited, and joins the same collective with the same mask;
// - a shuffle that reads a lane outside the mask gets poison (all bits set:
//   NaN for floats), as the value is undefined on a GPU;
// - dynamic shared memory starts every block as poison, so a read before any
//   write shows up as NaN;
// - tensor cores through nvcuda::wmma, TF32 16x16x8 (wmma.h): TF32 rounding
//   and products, and every wmma call made by the whole warp together; not
//   the hardware's layout of fragment elements over lanes.
// Not modelled: races between blocks (blocks of one worker run in order),
// static __shared__ contents (they persist between blocks), the memory model
// (__threadfence), cooperative groups, inline PTX, other tensor-core shapes
// and types. Floats may differ from a GPU in the last bits (FMA contraction):
// compare with tolerances. Out-of-bounds accesses are found by the
// AddressSanitizer build.
#pragma once
#ifdef __CUDACC__
#error "cudasim.h is for the host-compiler build of the CUDA kernels"
#endif
#include <atomic>
#include <cmath>
#include <math.h>  // the float overloads of exp, tanh, ... in the global namespace, as in CUDA
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "api.h"

// ---------------------------------------------------------------- vocabulary
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __restrict__ __restrict
#ifdef CUDASIM_THREADS
#define __shared__ static  // blocks run one at a time, each thread an OS thread
#else
#define __shared__ static thread_local  // one per OS thread, which runs one block at a time
#endif
#define __constant__
#define __launch_bounds__(...)
#define __syncthreads() ::cudasim::detail::syncthreads_at(__FILE__, __LINE__)

struct uint3 {
  unsigned x, y, z;
};
struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
};
constexpr int warpSize = 32;
inline thread_local uint3 threadIdx, blockIdx;
inline thread_local dim3 blockDim, gridDim;

using cudaStream_t = struct CUstream_st*;
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };

namespace cudasim {

constexpr size_t kDefaultDynamicShared = 48 * 1024;  // without cudaFuncSetAttribute
constexpr size_t kMaxDynamicShared = 227 * 1024;     // sm_90's opt-in ceiling

namespace detail {

// The type-erased kernel call each fiber makes: invoke(params).
struct KernelCall {
  const char* name;
  const void* function;  // the kernel's address, the key of its shared-memory attribute
  void (*invoke)(const void* params);
  const void* params;
};
void run(const KernelCall& call, dim3 grid, dim3 block, size_t dynamic_shared);
size_t dynamic_shared_limit(const void* function);
void set_dynamic_shared_limit(const void* function, size_t bytes);
unsigned char* dynamic_shared_base();

void syncthreads_at(const char* file, int line);
[[noreturn]] void fail(const std::string& what);  // from inside a kernel

enum class Collective : uint8_t { shfl, shfl_up, shfl_down, shfl_xor, ballot, any, all, syncwarp };
// The calling lane joins a collective and waits for the lanes of `mask`; returns
// its result (a value's bits, a ballot, or all-ones when the source lane did not
// take part).
uint64_t collective(Collective op, unsigned mask, uint64_t value, int lane_arg, int width);

template <class T>
uint64_t to_bits(T v) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable<T>::value, "warp collectives take <= 8-byte values");
  uint64_t b = 0;
  std::memcpy(&b, &v, sizeof v);
  return b;
}
template <class T>
T from_bits(uint64_t b) {
  T v;
  std::memcpy(&v, &b, sizeof v);
  return v;
}

template <class Tuple>
void invoke_tuple(const void* params) {
  Tuple copy = *static_cast<const Tuple*>(params);  // each thread its own copy, as on a GPU
  std::apply([](auto kernel, auto&... args) { kernel(args...); }, copy);
}
}  // namespace detail

// kernel<<<grid, block, shared, stream>>>(args...) in the host build; the stream is
// ignored (every launch completes before it returns).
template <class... P, class... A>
void launch(const char* name, void (*kernel)(P...), dim3 grid, dim3 block, size_t dynamic_shared,
            cudaStream_t, A&&... args) {
  static_assert(sizeof...(P) == sizeof...(A), "wrong number of kernel arguments");
  using Params = std::tuple<void (*)(P...), std::decay_t<P>...>;
  const Params params(kernel, static_cast<std::decay_t<P>>(std::forward<A>(args))...);
  const detail::KernelCall call{name, reinterpret_cast<const void*>(kernel), &detail::invoke_tuple<Params>, &params};
  detail::run(call, grid, block, dynamic_shared);
}

template <class T>
T* dynamic_shared() {
  return reinterpret_cast<T*>(detail::dynamic_shared_base());
}
}  // namespace cudasim

template <class... P>
inline int cudaFuncSetAttribute(void (*kernel)(P...), cudaFuncAttribute attr, int value) {
  if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize)
    cudasim::detail::set_dynamic_shared_limit(reinterpret_cast<const void*>(kernel), size_t(value));
  return 0;
}

// ------------------------------------------------------- warp collectives
template <class T>
T __shfl_sync(unsigned mask, T v, int src, int width = warpSize) {
  using cudasim::detail::Collective;
  return cudasim::detail::from_bits<T>(
      cudasim::detail::collective(Collective::shfl, mask, cudasim::detail::to_bits(v), src, width));
}
template <class T>
T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = warpSize) {
  using cudasim::detail::Collective;
  return cudasim::detail::from_bits<T>(
      cudasim::detail::collective(Collective::shfl_up, mask, cudasim::detail::to_bits(v), int(delta), width));
}
template <class T>
T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = warpSize) {
  using cudasim::detail::Collective;
  return cudasim::detail::from_bits<T>(
      cudasim::detail::collective(Collective::shfl_down, mask, cudasim::detail::to_bits(v), int(delta), width));
}
template <class T>
T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = warpSize) {
  using cudasim::detail::Collective;
  return cudasim::detail::from_bits<T>(
      cudasim::detail::collective(Collective::shfl_xor, mask, cudasim::detail::to_bits(v), lane_mask, width));
}
inline unsigned __ballot_sync(unsigned mask, int pred) {
  return unsigned(cudasim::detail::collective(cudasim::detail::Collective::ballot, mask, pred != 0, 0, 32));
}
inline int __any_sync(unsigned mask, int pred) {
  return int(cudasim::detail::collective(cudasim::detail::Collective::any, mask, pred != 0, 0, 32));
}
inline int __all_sync(unsigned mask, int pred) {
  return int(cudasim::detail::collective(cudasim::detail::Collective::all, mask, pred != 0, 0, 32));
}
inline void __syncwarp(unsigned mask = 0xffffffffu) {
  cudasim::detail::collective(cudasim::detail::Collective::syncwarp, mask, 0, 0, 32);
}

// ----------------------------------------------------------------- atomics
// Blocks of different workers run at the same time, so these are real atomics.
template <class T>
T atomicAdd(T* p, T v) {
  return std::atomic_ref<T>(*p).fetch_add(v);
}
template <class T>
T atomicExch(T* p, T v) {
  return std::atomic_ref<T>(*p).exchange(v);
}
template <class T>
T atomicCAS(T* p, T expected, T desired) {
  std::atomic_ref<T>(*p).compare_exchange_strong(expected, desired);
  return expected;
}
template <class T>
T atomicMax(T* p, T v) {
  std::atomic_ref<T> a(*p);
  T old = a.load();
  while (old < v && !a.compare_exchange_weak(old, v)) {
  }
  return old;
}

// ------------------------------------------------------ device math functions
inline float __expf(float x) { return std::exp(x); }
inline float __logf(float x) { return std::log(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
template <class T>
T __ldg(const T* p) {
  return *p;
}

// ------------------------------------------------- tensor cores (nvcuda::wmma)
#include "wmma.h"
