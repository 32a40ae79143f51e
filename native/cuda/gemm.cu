// GEMM on the GPU: C = alpha * op(A) * op(B) + beta * C, row-major, float or
// double. The classic two-level blocking:
// - each block computes a 64 x 64 tile of C; per step of 16 along K it copies
//   a 64 x 16 tile of op(A) and a 16 x 64 tile of op(B) into shared memory
//   (coalesced: consecutive threads read consecutive addresses of whichever
//   layout A and B have), then waits at a barrier;
// - each of its 16 x 16 threads keeps a 4 x 4 block of C in registers and, per
//   k, reads 4 values of each tile: 8 shared-memory reads for 16 FMAs.
// Rows and columns past the matrix edge load as zero and store nothing, so
// any M, N, K works.
#include "common.cuh"
#include "gemm.h"

namespace minifw {
namespace MINIFW_CUDA_NS {
namespace {

constexpr int kTileM = 64, kTileN = 64, kTileK = 16;
constexpr int kThreadsX = 16, kThreadsY = 16;  // a 4 x 4 register block each
constexpr int kRegM = kTileM / kThreadsY, kRegN = kTileN / kThreadsX;
constexpr int kThreads = kThreadsX * kThreadsY;

template <typename T>
__global__ void __launch_bounds__(kThreads)
    gemm_tiled(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, T alpha, const T* a, int64_t lda,
               const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  __shared__ T a_tile[kTileK][kTileM + 1];  // op(A) tile, k-major; +1 keeps column writes off one bank
  __shared__ T b_tile[kTileK][kTileN];      // op(B) tile, k-major
  const int tid = threadIdx.y * kThreadsX + threadIdx.x;
  const int64_t row0 = int64_t(blockIdx.x) * kTileM, col0 = int64_t(blockIdx.y) * kTileN;
  T acc[kRegM][kRegN] = {};
  for (int64_t k0 = 0; k0 < K; k0 += kTileK) {
    for (int i = tid; i < kTileM * kTileK; i += kThreads) {
      // op(A)[r][k]: A[r][k] (k contiguous) or A[k][r] (r contiguous); the
      // contiguous index varies fastest between threads.
      const int r = trans_a ? i % kTileM : i / kTileK, k = trans_a ? i / kTileM : i % kTileK;
      const int64_t gr = row0 + r, gk = k0 + k;
      a_tile[k][r] = (gr < M && gk < K) ? (trans_a ? a[gk * lda + gr] : a[gr * lda + gk]) : T(0);
    }
    for (int i = tid; i < kTileK * kTileN; i += kThreads) {
      // op(B)[k][n]: B[k][n] (n contiguous) or B[n][k] (k contiguous).
      const int n = trans_b ? i / kTileK : i % kTileN, k = trans_b ? i % kTileK : i / kTileN;
      const int64_t gn = col0 + n, gk = k0 + k;
      b_tile[k][n] = (gn < N && gk < K) ? (trans_b ? b[gn * ldb + gk] : b[gk * ldb + gn]) : T(0);
    }
    __syncthreads();
    for (int k = 0; k < kTileK; ++k) {
      T av[kRegM], bv[kRegN];
      for (int i = 0; i < kRegM; ++i) av[i] = a_tile[k][threadIdx.y + i * kThreadsY];
      for (int j = 0; j < kRegN; ++j) bv[j] = b_tile[k][threadIdx.x + j * kThreadsX];
      for (int i = 0; i < kRegM; ++i)
        for (int j = 0; j < kRegN; ++j) acc[i][j] += av[i] * bv[j];
    }
    __syncthreads();  // the tiles are overwritten next step
  }
  // Rows and columns a stride of 16 apart: a warp's stores to one row are contiguous.
  for (int i = 0; i < kRegM; ++i) {
    const int64_t r = row0 + threadIdx.y + i * kThreadsY;
    if (r >= M) continue;
    for (int j = 0; j < kRegN; ++j) {
      const int64_t n = col0 + threadIdx.x + j * kThreadsX;
      if (n >= N) continue;
      T* out = c + r * ldc + n;
      *out = beta == T(0) ? alpha * acc[i][j] : alpha * acc[i][j] + beta * *out;  // beta 0: C is not read
    }
  }
}
}  // namespace

template <typename T>
void gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, T alpha, const T* a, int64_t lda, const T* b,
          int64_t ldb, T beta, T* c, int64_t ldc, void* stream) {
  if (M == 0 || N == 0) return;
  // Row tiles along x (up to 2^31 - 1 of them), column tiles along y (up to 65535).
  const dim3 grid(unsigned((M + kTileM - 1) / kTileM), unsigned((N + kTileN - 1) / kTileN));
  launch("gemm_tiled", gemm_tiled<T>, grid, dim3(kThreadsX, kThreadsY), 0, static_cast<cudaStream_t>(stream),
         trans_a, trans_b, M, N, K, alpha, a, lda, b, ldb, beta, c, ldc);
}

template void gemm<float>(bool, bool, int64_t, int64_t, int64_t, float, const float*, int64_t, const float*, int64_t,
                          float, float*, int64_t, void*);
template void gemm<double>(bool, bool, int64_t, int64_t, int64_t, double, const double*, int64_t, const double*,
                           int64_t, double, double*, int64_t, void*);
}  // namespace MINIFW_CUDA_NS
}  // namespace minifw
