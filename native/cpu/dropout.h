// Dropout with a counter-based random number generator, so that the mask
// depends only on (seed, element index): the same for any thread count and
// any ISA.
//
// The generator is Philox-4x32-10 (Salmon, Moraes, Dror, Shaw: "Parallel
// random numbers: as easy as 1, 2, 3", SC 2011), keyed by the 64-bit seed.
// Elements are taken in blocks of 64: element i of block b = i / 64 uses word
// w = (i % 64) / 16 of the output for counter 16 * b + i % 16, so one block is
// 16 counters whose 4 output words cover 16 consecutive elements each (a
// layout that vectorizes without shuffles). An element is kept when its word
// is >= floor(p * 2^32).
#pragma once
#include <cstdint>

#include "isa_dispatch.h"

namespace minifw {

// y = x * (mask / (1 - p)), mask[i] = 1 where kept. p in [0, 1]. (p = 1 gives
// y = 0 exactly, p = 0 a copy of x.)
template <typename T>
void dropout_forward(const T* x, T* y, uint8_t* mask, int64_t n, double p, uint64_t seed, int nthreads);

// dx = dy * ((mask != 0) / (1 - p)), with 1 / (1 - p) taken as 0 when p == 1.
template <typename T>
void dropout_backward(const T* dy, const uint8_t* mask, T* dx, int64_t n, double p, int nthreads);

// The block kernel, built once per ISA from dropout_impl.h (isa_dispatch.h):
// elements [64 * b0, 64 * b0 + n) of x, y and mask, each pointer already at
// element 64 * b0.
template <typename T>
using DropoutBlocks = void (*)(const T* x, T* y, uint8_t* mask, int64_t n, int64_t b0, uint32_t threshold,
                               T scale, uint64_t seed);
template <typename T>
struct DropoutKernels {
  DropoutBlocks<T> forward;
};
MINIFW_DECLARE_ISA_VARIANTS(DropoutKernels<float>);
MINIFW_DECLARE_ISA_VARIANTS(DropoutKernels<double>);

}  // namespace minifw
