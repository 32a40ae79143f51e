// The register-blocked micro-kernel, written once over a SIMD traits struct V
// and instantiated per ISA: gemm_kernels_avx512.cpp and gemm_kernels_avx2.cpp
// with the traits of simd_avx512.h / simd_avx2.h, gemm.cpp with portable
// 16-byte vectors. V provides T, reg, lanes, zero, set1, broadcast (one value
// from memory into every lane), load, store, fma(a, b, c) = a * b + c, mul
// and prefetch.
//
// An MR x (NV * lanes) tile of C lives in MR * NV vector registers for the
// whole K loop; each step loads NV vectors of the packed B row and broadcasts
// MR values of the packed A column (an outer product). This is the
// "broadcast A, stream B" form that suits row-major C.
//
// With Stream, a tile with beta == 0 is written with non-temporal stores (V::stream:
// c and ldc aligned to the vector's size), which go to memory without first reading
// C's lines into the cache: for a C far larger than the caches (see gemm_block).
#pragma once
#include <cstdint>

namespace minifw {

template <typename V, int MR, int NV, int KU = 1, bool Stream = false>
inline void micro_kernel_impl(int64_t kc, const typename V::T* __restrict a,
                              const typename V::T* __restrict b, typename V::T* __restrict c,
                              int64_t ldc, typename V::T alpha, typename V::T beta) {
  using T = typename V::T;
  constexpr int L = V::lanes;
  typename V::reg acc[MR][NV];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[i][v] = V::zero();
  // Start fetching the C tile now; it is needed only after the K loop, and
  // its rows are ldc apart, too far for the hardware prefetcher to guess.
  // (Non-temporal stores need no copy of it in the cache.)
  if constexpr (!Stream) {
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      V::prefetch(c + i * ldc);
      V::prefetch(c + i * ldc + NV * L - 1);
    }
  }

  // One step of K: an outer product of MR values of A and NV vectors of B.
  auto step = [&](const T* ak, const T* bk) __attribute__((always_inline)) {
    typename V::reg bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) bv[v] = V::load(bk + v * L);
    V::prefetch(bk + 8 * NV * L);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      typename V::reg ai = V::broadcast(ak + i);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[i][v] = V::fma(ai, bv[v], acc[i][v]);
    }
  };
  // KU steps per iteration: fewer loop branches and pointer updates among the FMAs.
  int64_t k = 0;
  for (; k + KU <= kc; k += KU) {
#pragma GCC unroll 8
    for (int u = 0; u < KU; ++u) step(a + u * MR, b + u * NV * L);
    a += KU * MR;
    b += KU * NV * L;
  }
  for (; k < kc; ++k) {
    step(a, b);
    a += MR;
    b += NV * L;
  }

  const typename V::reg va = V::set1(alpha);
  if (beta == T(0)) {
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) {
        if constexpr (Stream) V::stream(c + i * ldc + v * L, V::mul(va, acc[i][v]));
        else V::store(c + i * ldc + v * L, V::mul(va, acc[i][v]));
      }
  } else {
    const typename V::reg vb = V::set1(beta);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) {
        T* p = c + i * ldc + v * L;
        V::store(p, V::fma(va, acc[i][v], V::mul(vb, V::load(p))));
      }
  }
}

}  // namespace minifw
