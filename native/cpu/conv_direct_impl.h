// The direct convolution's tile over a SIMD traits struct V (simd_generic.h,
// simd_avx2.h, simd_avx512.h), instantiated in conv_direct.cpp (generic),
// conv_direct_avx2.cpp and conv_direct_avx512.cpp.
//
// The forward tile is the GEMM micro-kernel's outer product (gemm_microkernel.h: MR
// broadcast values of A times two vectors of B per step of K) with one difference: B's
// row k is not a packed panel but the padded input at offset koff[k], loaded unaligned.
// The backward-filter's tile is the same outer product with the roles turned: the
// broadcast values are the padded input, shifted per (channel, tap) pair, and the
// vectors are dY transposed (output channels along the vector), so the sum over
// positions stays in registers.
#pragma once
#include <cstdint>
#include <utility>

#include "conv_direct.h"

namespace minifw {

template <typename V, int MR>
void direct_tile(int64_t kdim, const typename V::T* __restrict a, const typename V::T* __restrict b,
                 const int64_t* __restrict koff, typename V::T* __restrict c) {
  using T = typename V::T;
  constexpr int L = V::lanes;
  typename V::reg acc[MR][2];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) acc[i][0] = acc[i][1] = V::zero();
  auto step = [&](const T* ak, const T* bk) __attribute__((always_inline)) {
    const typename V::reg b0 = V::load(bk), b1 = V::load(bk + L);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const typename V::reg ai = V::broadcast(ak + i);
      acc[i][0] = V::fma(ai, b0, acc[i][0]);
      acc[i][1] = V::fma(ai, b1, acc[i][1]);
    }
  };
  int64_t k = 0;
  for (; k + 2 <= kdim; k += 2) {
    step(a + k * MR, b + koff[k]);
    step(a + (k + 1) * MR, b + koff[k + 1]);
  }
  if (k < kdim) step(a + k * MR, b + koff[k]);
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) {
    V::store(c + i * 2 * L, acc[i][0]);
    V::store(c + i * 2 * L + L, acc[i][1]);
  }
}

template <typename V, int MR>
void direct_filter_tile(int64_t n, const typename V::T* const* rows, const typename V::T* __restrict bt,
                        typename V::T* __restrict c) {
  using T = typename V::T;
  constexpr int L = V::lanes;
  const T* r[MR];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) r[i] = rows[i];
  typename V::reg acc[MR][2];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) acc[i][0] = acc[i][1] = V::zero();
  for (int64_t t = 0; t < n; ++t) {
    const typename V::reg b0 = V::load(bt + t * 2 * L), b1 = V::load(bt + t * 2 * L + L);
    V::prefetch(bt + (t + 16) * 2 * L);
    V::prefetch(bt + (t + 16) * 2 * L + L);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const typename V::reg ai = V::broadcast(r[i] + t);
      acc[i][0] = V::fma(ai, b0, acc[i][0]);
      acc[i][1] = V::fma(ai, b1, acc[i][1]);
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) {
    V::store(c + i * 2 * L, acc[i][0]);
    V::store(c + i * 2 * L + L, acc[i][1]);
  }
}

template <typename V, int... MR>
DirectKernels<typename V::T> direct_kernels_of(std::integer_sequence<int, MR...>) {
  constexpr int mr_max = sizeof...(MR);
  static_assert(mr_max <= DirectKernels<typename V::T>::kMaxRows, "too many rows for the table");
  static_assert(2 * V::lanes <= DirectKernels<typename V::T>::kMaxCols, "too many columns for a tile");
  return {2 * V::lanes, mr_max, {nullptr, &direct_tile<V, MR + 1>...}, {nullptr, &direct_filter_tile<V, MR + 1>...}};
}

// The table of tiles of 1 .. MaxRows rows.
template <typename V, int MaxRows>
DirectKernels<typename V::T> make_direct_kernels() {
  return direct_kernels_of<V>(std::make_integer_sequence<int, MaxRows>());
}

}  // namespace minifw
