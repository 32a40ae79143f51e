// The tiled GEMM kernel that gemm.cu and conv.cu share: C = op(A) * op(B), one
// 64 x 64 tile of C per block, for `groups` independent products (blockIdx.z).
// What the operands are is up to `Op`, so the same kernel multiplies plain
// matrices and, for implicit-GEMM convolution, a lowered matrix that is never
// stored: its tile is gathered from the image while it is copied to shared memory.
//
// Op provides, all __device__ and const:
//   int64_t rows(), cols(), depth()            M, N and K
//   bool a_depth_fastest(), b_cols_fastest()   which index of A (of B) is contiguous in
//                                              memory, so that neighbouring threads load
//                                              neighbouring addresses
//   T load_a(g, row, k), load_b(g, k, col)     elements of op(A) and op(B), in range
//   void store(g, row, col, acc)               writes the result (scaling, bias, beta)
//
// Two levels of blocking: per step of 16 along K the block copies a 64 x 16 tile
// of A and a 16 x 64 tile of B into shared memory, then each of its 16 x 16
// threads updates a 4 x 4 block of C held in registers (8 shared loads per 16
// FMAs). Elements past an edge load as zero and store nothing: any M, N, K.
#pragma once
#include "common.cuh"

namespace minifw {
namespace MINIFW_CUDA_NS {

constexpr int kTileM = 64, kTileN = 64, kTileK = 16;
constexpr int kTileThreadsX = 16, kTileThreadsY = 16;
constexpr int kRegM = kTileM / kTileThreadsY, kRegN = kTileN / kTileThreadsX;
constexpr int kTileThreads = kTileThreadsX * kTileThreadsY;

template <typename T, typename Op>
__global__ void __launch_bounds__(kTileThreads) tiled_gemm(Op op) {
  __shared__ T a_tile[kTileK][kTileM + 1];  // k-major; +1 keeps the column writes off one bank
  __shared__ T b_tile[kTileK][kTileN];
  const int64_t g = blockIdx.z, M = op.rows(), N = op.cols(), K = op.depth();
  const int64_t row0 = int64_t(blockIdx.x) * kTileM, col0 = int64_t(blockIdx.y) * kTileN;
  const int tid = threadIdx.y * kTileThreadsX + threadIdx.x;
  const bool a_k_fast = op.a_depth_fastest(), b_n_fast = op.b_cols_fastest();
  T acc[kRegM][kRegN] = {};
  for (int64_t k0 = 0; k0 < K; k0 += kTileK) {
    for (int i = tid; i < kTileM * kTileK; i += kTileThreads) {
      const int r = a_k_fast ? i / kTileK : i % kTileM, k = a_k_fast ? i % kTileK : i / kTileM;
      const int64_t gr = row0 + r, gk = k0 + k;
      a_tile[k][r] = (gr < M && gk < K) ? op.load_a(g, gr, gk) : T(0);
    }
    for (int i = tid; i < kTileK * kTileN; i += kTileThreads) {
      const int n = b_n_fast ? i % kTileN : i / kTileK, k = b_n_fast ? i / kTileN : i % kTileK;
      const int64_t gn = col0 + n, gk = k0 + k;
      b_tile[k][n] = (gn < N && gk < K) ? op.load_b(g, gk, gn) : T(0);
    }
    __syncthreads();
    for (int k = 0; k < kTileK; ++k) {
      T av[kRegM], bv[kRegN];
      for (int i = 0; i < kRegM; ++i) av[i] = a_tile[k][threadIdx.y + i * kTileThreadsY];
      for (int j = 0; j < kRegN; ++j) bv[j] = b_tile[k][threadIdx.x + j * kTileThreadsX];
      for (int i = 0; i < kRegM; ++i)
        for (int j = 0; j < kRegN; ++j) acc[i][j] += av[i] * bv[j];
    }
    __syncthreads();  // the tiles are overwritten next step
  }
  // Rows and columns a stride of 16 apart: a warp's stores to one row are contiguous.
  for (int i = 0; i < kRegM; ++i) {
    const int64_t r = row0 + threadIdx.y + i * kTileThreadsY;
    if (r >= M) continue;
    for (int j = 0; j < kRegN; ++j) {
      const int64_t n = col0 + threadIdx.x + j * kTileThreadsX;
      if (n < N) op.store(g, r, n, acc[i][j]);
    }
  }
}

// Launches tiled_gemm for op's M x N result in each of `groups` products.
template <typename T, typename Op>
void launch_tiled_gemm(const char* name, const Op& op, int64_t M, int64_t N, int64_t groups, cudaStream_t stream) {
  if (M == 0 || N == 0 || groups == 0) return;
  const int64_t row_tiles = (M + kTileM - 1) / kTileM, col_tiles = (N + kTileN - 1) / kTileN;
  if (row_tiles > 2147483647 || col_tiles > 65535 || groups > 65535)
    throw std::invalid_argument(std::string(name) + ": a " + std::to_string(M) + " x " + std::to_string(N) +
                                " product in " + std::to_string(groups) + " groups is over the grid's limits");
  launch(name, tiled_gemm<T, Op>, dim3(unsigned(row_tiles), unsigned(col_tiles), unsigned(groups)),
         dim3(kTileThreadsX, kTileThreadsY), 0, stream, op);
}

}  // namespace MINIFW_CUDA_NS
}  // namespace minifw
