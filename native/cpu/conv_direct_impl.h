// The direct convolution's tile over a SIMD traits struct V (simd_generic.h,
// simd_avx2.h, simd_avx512.h), instantiated in conv_direct.cpp (generic),
// conv_direct_avx2.cpp and conv_direct_avx512.cpp.
//
// The forward tile is the GEMM micro-kernel's outer product (gemm_microkernel.h: MR
// broadcast values of A times two vectors of B per step of K) with one difference: B's
// row k is not a packed panel but the padded input at offset koff[k], loaded unaligned.
// The backward-filter's tile is the few-row GEMM's dot products (gemm_dot.h) with the
// taps of one channel as B's rows, and lane sums kept in memory between chunks.
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

template <typename V, int MB, int NB>
void direct_filter_tile(int64_t n, const typename V::T* __restrict a, int64_t lda,
                        const typename V::T* __restrict b, const int64_t* __restrict toff,
                        typename V::T* __restrict partial) {
  constexpr int L = V::lanes;
  typename V::reg acc[MB][NB];
#pragma GCC unroll 4
  for (int i = 0; i < MB; ++i)
#pragma GCC unroll 8
    for (int t = 0; t < NB; ++t) acc[i][t] = V::zero();
  for (int64_t j = 0; j < n; j += L) {
    typename V::reg av[MB];
#pragma GCC unroll 4
    for (int i = 0; i < MB; ++i) av[i] = V::load(a + i * lda + j);
#pragma GCC unroll 8
    for (int t = 0; t < NB; ++t) {
      const typename V::reg bv = V::load(b + toff[t] + j);
#pragma GCC unroll 4
      for (int i = 0; i < MB; ++i) acc[i][t] = V::fma(av[i], bv, acc[i][t]);
    }
  }
#pragma GCC unroll 8
  for (int t = 0; t < NB; ++t)
#pragma GCC unroll 4
    for (int i = 0; i < MB; ++i) {
      typename V::T* p = partial + (t * MB + i) * L;
      V::store(p, V::add(V::load(p), acc[i][t]));
    }
}

template <typename V, int MB, int... NB>
void fill_filter_row(DirectFilterFn<typename V::T>* row, std::integer_sequence<int, NB...>) {
  ((row[NB + 1] = &direct_filter_tile<V, MB, NB + 1>), ...);
}

template <typename V, int Taps, int... MB>
void fill_filter_table(DirectKernels<typename V::T>& k, std::integer_sequence<int, MB...>) {
  (fill_filter_row<V, MB + 1>(k.filter[MB + 1], std::make_integer_sequence<int, Taps>()), ...);
}

template <typename V, int... MR>
DirectKernels<typename V::T> direct_kernels_of(std::integer_sequence<int, MR...>) {
  constexpr int mr_max = sizeof...(MR);
  static_assert(mr_max <= DirectKernels<typename V::T>::kMaxRows, "too many rows for the table");
  static_assert(2 * V::lanes <= DirectKernels<typename V::T>::kMaxCols, "too many columns for a tile");
  return {2 * V::lanes, mr_max, {nullptr, &direct_tile<V, MR + 1>...}, V::lanes, 0, {}};
}

// The table of forward tiles of 1 .. MaxRows rows and of filter tiles of 1 .. 4 rows by
// 1 .. FilterTaps taps.
template <typename V, int MaxRows, int FilterTaps>
DirectKernels<typename V::T> make_direct_kernels() {
  using K = DirectKernels<typename V::T>;
  static_assert(FilterTaps <= K::kMaxFilterTaps, "too many taps for the table");
  K k = direct_kernels_of<V>(std::make_integer_sequence<int, MaxRows>());
  k.filter_taps = FilterTaps;
  fill_filter_table<V, FilterTaps>(k, std::make_integer_sequence<int, K::kMaxFilterRows>());
  return k;
}

}  // namespace minifw
