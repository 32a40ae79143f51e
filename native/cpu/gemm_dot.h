// GEMM for a C with few rows and B given transposed, C = alpha * A * B^T + beta * C
// with A (M x K) and B (N x K) both row-major: an inner-product layer's forward
// at a small batch (AlexNet's fc6: 16 x 4096 x 9216). There the packed GEMM
// would spend more time packing B, which is the whole weight matrix and is
// used by only M rows, than multiplying; here neither operand is packed. Each
// MB x NB tile of C is MB * NB dot products over K, held in vector registers
// lane-wise and summed across lanes at the end, reading MB rows of A and NB
// rows of B straight from memory.
//
// Written once over the SIMD traits of gemm_microkernel.h and instantiated
// per ISA (the tables in gemm.cpp, gemm_kernels_avx2.cpp, gemm_kernels_avx512.cpp).
#pragma once
#include <algorithm>
#include <cstdint>

namespace minifw {

template <typename V, int MB, int NB>
inline void dot_tile(int64_t K, const typename V::T* __restrict a, int64_t lda,
                     const typename V::T* __restrict b, int64_t ldb, typename V::T* __restrict c,
                     int64_t ldc, typename V::T alpha, typename V::T beta) {
  using T = typename V::T;
  constexpr int L = V::lanes;
  typename V::reg acc[MB][NB];
#pragma GCC unroll 4
  for (int i = 0; i < MB; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < NB; ++j) acc[i][j] = V::zero();
  int64_t k = 0;
  for (; k + L <= K; k += L) {
    typename V::reg bv[NB];
#pragma GCC unroll 4
    for (int j = 0; j < NB; ++j) bv[j] = V::load(b + j * ldb + k);
#pragma GCC unroll 4
    for (int i = 0; i < MB; ++i) {
      const typename V::reg av = V::load(a + i * lda + k);
#pragma GCC unroll 4
      for (int j = 0; j < NB; ++j) acc[i][j] = V::fma(av, bv[j], acc[i][j]);
    }
  }
  alignas(64) T lanes[L];
  for (int i = 0; i < MB; ++i) {
    for (int j = 0; j < NB; ++j) {
      V::store(lanes, acc[i][j]);
      T sum = T(0);
      for (int l = 0; l < L; ++l) sum += lanes[l];
      for (int64_t t = k; t < K; ++t) sum += a[i * lda + t] * b[j * ldb + t];
      T& out = c[i * ldc + j];
      out = beta == T(0) ? alpha * sum : alpha * sum + beta * out;  // beta 0: c is not read
    }
  }
}

// An mb x nb tile (mb <= MB, nb <= NB) by the instantiation of exactly that size.
template <typename V, int MB, int NB>
inline void dot_tile_edge(int mb, int nb, int64_t K, const typename V::T* a, int64_t lda,
                          const typename V::T* b, int64_t ldb, typename V::T* c, int64_t ldc,
                          typename V::T alpha, typename V::T beta) {
  if constexpr (MB > 1) {
    if (mb < MB) return dot_tile_edge<V, MB - 1, NB>(mb, nb, K, a, lda, b, ldb, c, ldc, alpha, beta);
  }
  if constexpr (NB > 1) {
    if (nb < NB) return dot_tile_edge<V, MB, NB - 1>(mb, nb, K, a, lda, b, ldb, c, ldc, alpha, beta);
  }
  dot_tile<V, MB, NB>(K, a, lda, b, ldb, c, ldc, alpha, beta);
}

// Columns [n0, n1) of C, all M rows, on the calling thread. K runs in chunks of
// 4 KiB per row, so a tile's NB rows of B stay in the L1 while every row
// block of A passes over them, and the chunk of A (M rows) stays in the L2
// while all of B streams by once. K must be positive.
template <typename V, int MB, int NB>
void dot_gemm_columns(int64_t M, int64_t n0, int64_t n1, int64_t K, typename V::T alpha,
                      const typename V::T* A, int64_t lda, const typename V::T* B, int64_t ldb,
                      typename V::T beta, typename V::T* C, int64_t ldc) {
  using T = typename V::T;
  const int64_t chunk = 4096 / sizeof(T);
  for (int64_t k0 = 0; k0 < K; k0 += chunk) {
    const int64_t kc = std::min(chunk, K - k0);
    const T beta_k = k0 == 0 ? beta : T(1);  // later chunks add to the first
    for (int64_t j = n0; j < n1; j += NB) {
      const int nb = static_cast<int>(std::min<int64_t>(NB, n1 - j));
      for (int64_t i = 0; i < M; i += MB) {
        const int mb = static_cast<int>(std::min<int64_t>(MB, M - i));
        dot_tile_edge<V, MB, NB>(mb, nb, kc, A + i * lda + k0, lda, B + j * ldb + k0, ldb,
                                 C + i * ldc + j, ldc, alpha, beta_k);
      }
    }
  }
}

}  // namespace minifw
