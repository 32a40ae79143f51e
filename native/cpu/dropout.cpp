// Dropout: the generic variant of the block kernel, the forward through the
// active ISA's variant with threads over whole blocks of 64 elements (so the
// split never changes which random word an element gets), and the backward.
#include "dropout.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "dropout_impl.h"
#include "split_work.h"

namespace minifw {
namespace {
// dx = dy * scale where the mask is set, else 0. One out-of-line copy, with
// restrict pointers, for the calling thread and the pool alike: inlined into
// the parallel region's outlined body the loop did not vectorize and ran 10x
// slower on two threads than on one (a branch on a random mask).
template <typename T>
__attribute__((noinline)) void scale_by_mask(const T* __restrict dy, const uint8_t* __restrict mask,
                                             T* __restrict dx, int64_t n, T scale) {
  for (int64_t i = 0; i < n; ++i) dx[i] = dy[i] * (mask[i] ? scale : T(0));
}

template <typename T>
T keep_scale(double p) {
  return p < 1 ? static_cast<T>(1.0 / (1.0 - p)) : T(0);
}
}  // namespace

MINIFW_ISA_VARIANT(DropoutKernels<float>, generic, make_dropout_kernels<float>())
MINIFW_ISA_VARIANT(DropoutKernels<double>, generic, make_dropout_kernels<double>())

template <typename T>
void dropout_forward(const T* x, T* y, uint8_t* mask, int64_t n, double p, uint64_t seed, int nthreads) {
  if (p >= 1) {  // nothing kept: no division by zero, no random numbers
    std::memset(mask, 0, static_cast<size_t>(n));
    std::fill(y, y + n, T(0));
    return;
  }
  if (p <= 0) {
    std::memset(mask, 1, static_cast<size_t>(n));
    std::copy(x, x + n, y);
    return;
  }
  // floor(p * 2^32) < 2^32 here, since p < 1.
  const uint32_t threshold = static_cast<uint32_t>(std::floor(p * 4294967296.0));
  const T scale = keep_scale<T>(p);
  const DropoutBlocks<T> blocks = select_isa_variant<DropoutKernels<T>>().forward;
  const int64_t nblocks = (n + 63) / 64;
  // Philox costs ~10x a memory-bound op per element: parallel sooner.
  for_each_range(nblocks, nthreads, grain_for(64 * 8), [&](int64_t b, int64_t e) {
    const int64_t first = b * 64, last = std::min(n, e * 64);
    blocks(x + first, y + first, mask + first, last - first, b, threshold, scale, seed);
  });
}

template <typename T>
void dropout_backward(const T* dy, const uint8_t* mask, T* dx, int64_t n, double p, int nthreads) {
  const T scale = keep_scale<T>(p);
  for_each_range(n, nthreads, kParallelGrain,
                 [&](int64_t b, int64_t e) { scale_by_mask(dy + b, mask + b, dx + b, e - b, scale); });
}

template void dropout_forward<float>(const float*, float*, uint8_t*, int64_t, double, uint64_t, int);
template void dropout_forward<double>(const double*, double*, uint8_t*, int64_t, double, uint64_t, int);
template void dropout_backward<float>(const float*, const uint8_t*, float*, int64_t, double, int);
template void dropout_backward<double>(const double*, const uint8_t*, double*, int64_t, double, int);
}  // namespace minifw
