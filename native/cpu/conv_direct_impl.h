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
void direct_filter_tile(int64_t segs, int64_t len, const int64_t* __restrict seg, const typename V::T* const* rows,
                        const typename V::T* __restrict bt, typename V::T* __restrict c) {
  using T = typename V::T;
  constexpr int L = V::lanes;
  typename V::reg acc[MR][2];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) acc[i][0] = acc[i][1] = V::zero();
  for (int64_t sg = 0; sg < segs; ++sg) {
    const int64_t j = seg[sg];
    const T* r[MR];
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) r[i] = rows[i] + j;
    const T* b = bt + sg * len * 2 * L;
    for (int64_t t = 0; t < len; ++t) {
      const typename V::reg b0 = V::load(b + t * 2 * L), b1 = V::load(b + t * 2 * L + L);
      V::prefetch(b + (t + 16) * 2 * L);
      V::prefetch(b + (t + 16) * 2 * L + L);
#pragma GCC unroll 16
      for (int i = 0; i < MR; ++i) {
        const typename V::reg ai = V::broadcast(r[i] + t);
        acc[i][0] = V::fma(ai, b0, acc[i][0]);
        acc[i][1] = V::fma(ai, b1, acc[i][1]);
      }
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) {
    V::store(c + i * 2 * L, acc[i][0]);
    V::store(c + i * 2 * L + L, acc[i][1]);
  }
}

// The row tile: MR consecutive output positions of one output row by NV vectors of
// output channels. Each step of K broadcasts the MR input values of one (channel, tap)
// pair, x[koff[k] + i], and loads NV vectors of packed weights, b[k * NV * lanes ..].
// The sums are written out transposed, out[ch * plane + i] (+ bias[ch]): channel ch's
// MR positions are consecutive in its output plane.
template <typename V, int NV, int MR>
void direct_row_tile(int64_t kdim, const typename V::T* __restrict x, const int64_t* __restrict koff,
                     const typename V::T* __restrict b, const typename V::T* __restrict bias,
                     typename V::T* __restrict out, int64_t plane) {
  using T = typename V::T;
  constexpr int L = V::lanes;
  typename V::reg acc[MR][NV];
#pragma GCC unroll 32
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[i][v] = V::zero();
  auto step = [&](const T* xk, const T* bk) __attribute__((always_inline)) {
    typename V::reg bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) bv[v] = V::load(bk + v * L);
#pragma GCC unroll 32
    for (int i = 0; i < MR; ++i) {
      const typename V::reg ai = V::broadcast(xk + i);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[i][v] = V::fma(ai, bv[v], acc[i][v]);
    }
  };
  int64_t k = 0;
  for (; k + 2 <= kdim; k += 2) {
    step(x + koff[k], b + k * NV * L);
    step(x + koff[k + 1], b + (k + 1) * NV * L);
  }
  if (k < kdim) step(x + koff[k], b + k * NV * L);
  alignas(64) T c[MR][NV * L];
#pragma GCC unroll 32
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) V::store(&c[i][v * L], acc[i][v]);
  for (int ch = 0; ch < NV * L; ++ch) {
    const T add = bias ? bias[ch] : T(0);
    T* to = out + ch * plane;
#pragma GCC unroll 32
    for (int i = 0; i < MR; ++i) to[i] = c[i][ch] + add;
  }
}

// The row tile of NV vectors by MR positions where its NV x MR accumulators fit in the
// ISA's registers with room to spare (kFits), else none (and no code). Three vectors take
// up to (2 mr_max - 2) / 3 positions: with 27 of AVX-512's 32 registers as accumulators
// GCC spilled some in the loop over K.
template <typename V, int NV, int MR, bool kFits>
struct RowTileIf {
  static constexpr DirectRowTileFn<typename V::T> fn = nullptr;
};
template <typename V, int NV, int MR>
struct RowTileIf<V, NV, MR, true> {
  static constexpr DirectRowTileFn<typename V::T> fn = &direct_row_tile<V, NV, MR>;
};

template <typename V, int... MR>
DirectKernels<typename V::T> direct_kernels_of(std::integer_sequence<int, MR...>) {
  constexpr int mr_max = sizeof...(MR);
  static_assert(mr_max <= DirectKernels<typename V::T>::kMaxRows, "too many rows for the table");
  static_assert(2 * V::lanes <= DirectKernels<typename V::T>::kMaxCols, "too many columns for a tile");
  return {2 * V::lanes,
          mr_max,
          {nullptr, &direct_tile<V, MR + 1>...},
          {nullptr, &direct_filter_tile<V, MR + 1>...},
          {nullptr, &direct_row_tile<V, 2, MR + 1>...},
          {nullptr, &direct_row_tile<V, 1, MR + 1>..., &direct_row_tile<V, 1, mr_max + MR + 1>...},
          {nullptr, RowTileIf<V, 3, MR + 1, 3 * (MR + 1) <= 2 * mr_max - 2>::fn...}};
}

// The table of tiles of 1 .. MaxRows rows (row tiles of one vector: 1 .. 2 MaxRows).
template <typename V, int MaxRows>
DirectKernels<typename V::T> make_direct_kernels() {
  return direct_kernels_of<V>(std::make_integer_sequence<int, MaxRows>());
}

}  // namespace minifw
