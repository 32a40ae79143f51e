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
// threads updates a 4 x 4 block of C held in registers: 4 consecutive rows and 4
// consecutive columns, each read from shared memory as one 16-byte access (2
// shared loads per 16 FMAs). Elements past an edge load as zero and store
// nothing: any M, N, K.
//
// tiled_gemm_tf32 is the same product for float on TF32 tensor cores (sm_80+,
// nvcuda::wmma): the same tiles, loaded the same way, then each of the block's
// four warps multiplies a 32 x 32 quarter of C as 2 x 2 accumulator fragments
// of 16 x 16, two wmma steps of 8 along K per tile. Operands are rounded to
// TF32 (10-bit mantissa), products accumulate in float. The accumulators go
// through shared memory to Op::store, so scaling, bias and beta are applied
// exactly as in tiled_gemm. launch_tiled_gemm picks it when asked (the flags of
// math_mode.h) and T is float; double never uses it.
#pragma once
#include <type_traits>

#include "common.cuh"
#include "memory.h"
#ifdef __CUDACC__
#include <mma.h>  // the emulator's nvcuda::wmma comes with cudasim.h
#endif

namespace minifw {
namespace MINIFW_CUDA_NS {

constexpr int kTileM = 64, kTileN = 64, kTileK = 16;
constexpr int kTileThreadsX = 16, kTileThreadsY = 16;
constexpr int kTileThreads = kTileThreadsX * kTileThreadsY;
// From this many 128 x 128 tiles (about two per multiprocessor of a large GPU), with
// at least 128 rows and 128 columns, the kernel with 8 x 8 registers per thread (half
// the shared-memory reads per FMA); below, 64 x 64 tiles keep more blocks in flight, and
// waste less on a thin product (3 rows: AlexNet conv1's data gradient by implicit GEMM).
constexpr int64_t kLargeTileBlocks = 256;

// Four consecutive elements of a shared tile, read as one access: 16-byte aligned, so a
// float quad is one 128-bit shared load (a double quad two).
template <typename T>
struct alignas(16) Quad {
  T v[4];
};

// Reg x Reg results per thread, 16 x 16 threads: a (16 Reg) x (16 Reg) tile of C, and a
// step along K of 1024 / (16 Reg) (16 for Reg 4, 8 for Reg 8), so that each operand's
// tile is 1,024 elements, 4 per thread. Two shared buffers per operand: the next step's
// elements are fetched into registers before this step's FMAs and stored to the other
// buffer after them, one barrier per step. A thread's rows are Reg / 4 quads 64 apart,
// 4 (ty, its y index) + 64 h + q, and so are its columns: at each k, Reg / 2 quad loads
// feed Reg^2 FMAs. For float, a quarter warp's quads of B (8 threads, consecutive x) are
// 128 contiguous bytes, and its quads of A one address: no bank conflicts. (A double quad
// is 32 bytes, read as two 16-byte halves: 2-way conflicts, for gradient checks' double.)
template <typename T, typename Op, int Reg>
__global__ void __launch_bounds__(kTileThreads) tiled_gemm(Op op, bool cols_on_x) {
  static_assert(Reg % 4 == 0, "a thread's rows and columns are whole quads");
  static_assert(kTileThreadsX == kTileThreadsY, "rows and columns share the quads' span");
  constexpr int TM = kTileThreadsY * Reg, TN = kTileThreadsX * Reg, TK = 1024 / TM;
  constexpr int kLoads = TM * TK / kTileThreads, kQuads = Reg / 4, kQuadSpan = 4 * kTileThreadsX;
  // k-major, rows padded by a quad (which keeps each quad 16-byte aligned): a column
  // written by neighbouring threads (k fastest) moves 4 banks per k, so the 8 k of a
  // float Reg-8 tile and 4 rows fill all 32 banks
  alignas(16) __shared__ T a_tile[2][TK][TM + 4];
  alignas(16) __shared__ T b_tile[2][TK][TN + 4];
  const int64_t g = blockIdx.z, M = op.rows(), N = op.cols(), K = op.depth();
  const int64_t row0 = int64_t(cols_on_x ? blockIdx.y : blockIdx.x) * TM;
  const int64_t col0 = int64_t(cols_on_x ? blockIdx.x : blockIdx.y) * TN;
  const int tid = threadIdx.y * kTileThreadsX + threadIdx.x;
  const bool a_k_fast = op.a_depth_fastest(), b_n_fast = op.b_cols_fastest();
  T ra[kLoads], rb[kLoads];
  // Neighbouring threads read neighbouring addresses: along k or along rows (columns),
  // whichever the operand stores contiguously.
  auto fetch = [&](int64_t k0) {
    for (int l = 0; l < kLoads; ++l) {
      const int i = tid + l * kTileThreads;
      const int r = a_k_fast ? i / TK : i % TM, ka = a_k_fast ? i % TK : i / TM;
      const int n = b_n_fast ? i % TN : i / TK, kb = b_n_fast ? i / TN : i % TK;
      ra[l] = (row0 + r < M && k0 + ka < K) ? op.load_a(g, row0 + r, k0 + ka) : T(0);
      rb[l] = (col0 + n < N && k0 + kb < K) ? op.load_b(g, k0 + kb, col0 + n) : T(0);
    }
  };
  auto stash = [&](int buf) {
    for (int l = 0; l < kLoads; ++l) {
      const int i = tid + l * kTileThreads;
      const int r = a_k_fast ? i / TK : i % TM, ka = a_k_fast ? i % TK : i / TM;
      const int n = b_n_fast ? i % TN : i / TK, kb = b_n_fast ? i / TN : i % TK;
      a_tile[buf][ka][r] = ra[l];
      b_tile[buf][kb][n] = rb[l];
    }
  };
  T acc[Reg][Reg] = {};
  fetch(0);
  stash(0);
  __syncthreads();
  int buf = 0;
  for (int64_t k0 = 0; k0 < K; k0 += TK) {
    const bool more = k0 + TK < K;
    if (more) fetch(k0 + TK);  // in flight during the FMAs below
    for (int k = 0; k < TK; ++k) {
      T av[Reg], bv[Reg];
      for (int h = 0; h < kQuads; ++h) {
        const Quad<T> a = *reinterpret_cast<const Quad<T>*>(&a_tile[buf][k][h * kQuadSpan + 4 * threadIdx.y]);
        const Quad<T> b = *reinterpret_cast<const Quad<T>*>(&b_tile[buf][k][h * kQuadSpan + 4 * threadIdx.x]);
        for (int q = 0; q < 4; ++q) {
          av[4 * h + q] = a.v[q];
          bv[4 * h + q] = b.v[q];
        }
      }
      for (int i = 0; i < Reg; ++i)
        for (int j = 0; j < Reg; ++j) acc[i][j] += av[i] * bv[j];
    }
    if (more) stash(buf ^ 1);  // the buffer every thread finished reading before the last barrier
    __syncthreads();
    buf ^= 1;
  }
  // acc[i][j] is row 64 (i / 4) + 4 ty + i % 4 and column 64 (j / 4) + 4 tx + j % 4 of the
  // tile: one store instruction writes every fourth column of a 64-column span in two
  // rows, and the four consecutive j fill in the rest (the writes meet in the L2 cache).
  for (int i = 0; i < Reg; ++i) {
    const int64_t r = row0 + (i / 4) * kQuadSpan + 4 * threadIdx.y + i % 4;
    if (r >= M) continue;
    for (int j = 0; j < Reg; ++j) {
      const int64_t n = col0 + (j / 4) * kQuadSpan + 4 * threadIdx.x + j % 4;
      if (n < N) op.store(g, r, n, acc[i][j]);
    }
  }
}

// ---- TF32 tensor cores ---------------------------------------------------------------
constexpr int kWmmaM = 16, kWmmaN = 16, kWmmaK = 8;  // the TF32 fragment shape
constexpr int kTf32Warps = 4, kTf32Threads = 32 * kTf32Warps;
constexpr int kWarpM = kTileM / 2, kWarpN = kTileN / 2;  // each warp's quarter of C, 2 x 2 warps
constexpr int kFragsM = kWarpM / kWmmaM, kFragsN = kWarpN / kWmmaN;
// Row strides of the shared tiles: wmma wants a multiple of 4 floats and 256-bit
// aligned fragment pointers (every fragment starts 16 rows or 8 / 16 columns in);
// the extra 4 floats move successive rows to other banks.
constexpr int kLdA = kTileK + 4, kLdB = kTileN + 4, kLdC = kTileN + 4;

template <typename Op>
__global__ void __launch_bounds__(kTf32Threads) tiled_gemm_tf32(Op op, bool cols_on_x) {
  using namespace nvcuda;
  alignas(32) __shared__ float a_tile[kTileM * kLdA];  // row-major (row, k)
  alignas(32) __shared__ float b_tile[kTileK * kLdB];  // row-major (k, col)
  alignas(32) __shared__ float c_tile[kTileM * kLdC];  // the block's accumulators, on their way to Op::store
  const int64_t g = blockIdx.z, M = op.rows(), N = op.cols(), K = op.depth();
  const int64_t row0 = int64_t(cols_on_x ? blockIdx.y : blockIdx.x) * kTileM;
  const int64_t col0 = int64_t(cols_on_x ? blockIdx.x : blockIdx.y) * kTileN;
  const int tid = threadIdx.x, warp = tid / 32;
  const int warp_row = (warp / 2) * kWarpM, warp_col = (warp % 2) * kWarpN;
  const bool a_k_fast = op.a_depth_fastest(), b_n_fast = op.b_cols_fastest();
  wmma::fragment<wmma::accumulator, kWmmaM, kWmmaN, kWmmaK, float> acc[kFragsM][kFragsN];
  for (int i = 0; i < kFragsM; ++i)
    for (int j = 0; j < kFragsN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);
  for (int64_t k0 = 0; k0 < K; k0 += kTileK) {
    for (int i = tid; i < kTileM * kTileK; i += kTf32Threads) {
      const int r = a_k_fast ? i / kTileK : i % kTileM, k = a_k_fast ? i % kTileK : i / kTileM;
      const int64_t gr = row0 + r, gk = k0 + k;
      a_tile[r * kLdA + k] = (gr < M && gk < K) ? op.load_a(g, gr, gk) : 0.0f;
    }
    for (int i = tid; i < kTileK * kTileN; i += kTf32Threads) {
      const int n = b_n_fast ? i % kTileN : i / kTileK, k = b_n_fast ? i / kTileN : i % kTileK;
      const int64_t gn = col0 + n, gk = k0 + k;
      b_tile[k * kLdB + n] = (gn < N && gk < K) ? op.load_b(g, gk, gn) : 0.0f;
    }
    __syncthreads();
    for (int kk = 0; kk < kTileK; kk += kWmmaK) {
      wmma::fragment<wmma::matrix_a, kWmmaM, kWmmaN, kWmmaK, wmma::precision::tf32, wmma::row_major> a[kFragsM];
      wmma::fragment<wmma::matrix_b, kWmmaM, kWmmaN, kWmmaK, wmma::precision::tf32, wmma::row_major> b[kFragsN];
      for (int i = 0; i < kFragsM; ++i) {
        wmma::load_matrix_sync(a[i], a_tile + (warp_row + i * kWmmaM) * kLdA + kk, kLdA);
        for (int e = 0; e < a[i].num_elements; ++e) a[i].x[e] = wmma::__float_to_tf32(a[i].x[e]);
      }
      for (int j = 0; j < kFragsN; ++j) {
        wmma::load_matrix_sync(b[j], b_tile + kk * kLdB + warp_col + j * kWmmaN, kLdB);
        for (int e = 0; e < b[j].num_elements; ++e) b[j].x[e] = wmma::__float_to_tf32(b[j].x[e]);
      }
      for (int i = 0; i < kFragsM; ++i)
        for (int j = 0; j < kFragsN; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
    }
    __syncthreads();  // the tiles are overwritten next step
  }
  for (int i = 0; i < kFragsM; ++i)
    for (int j = 0; j < kFragsN; ++j)
      wmma::store_matrix_sync(c_tile + (warp_row + i * kWmmaM) * kLdC + warp_col + j * kWmmaN, acc[i][j], kLdC,
                              wmma::mem_row_major);
  __syncthreads();
  // Neighbouring threads store neighbouring columns, as in tiled_gemm.
  for (int i = tid; i < kTileM * kTileN; i += kTf32Threads) {
    const int r = i / kTileN, n = i % kTileN;
    if (row0 + r < M && col0 + n < N) op.store(g, row0 + r, col0 + n, c_tile[r * kLdC + n]);
  }
}

// ---- split-K ---------------------------------------------------------------------------
// A product with few tiles of C and a long K (a convolution's filter gradient: K x CRS
// tiles, K running over every pixel of the batch) would leave most of the GPU idle, one
// block walking all of K. Split, it is `splits` products over consecutive K ranges
// (grid z = split * groups + group), each block storing its partial tile to a workspace;
// a second kernel sums each element's partials in split order (the same result on every
// run) and hands the sum to Op::store, so scaling, bias and beta apply once, as unsplit.
// The workspace and the second launch cost microseconds: below a K of 4,096 a block's
// walk is as short (on an H200, LeNet's fc1, 64 x 500 x 800, ran 241 GFLOP/s split in 3
// against 326 unsplit). The char-LSTM's per-step 32 x 2048 x 512 products stay whole.
constexpr int64_t kSplitBelowBlocks = 128;  // fewer blocks than a large GPU has multiprocessors
constexpr int64_t kSplitTargetBlocks = 256;
constexpr int64_t kSplitMinK = 4096;
constexpr int64_t kSplitMinDepth = 256;  // K per split at least: 16 steps of kTileK

// How many K ranges to split op's product into: 1 where it has blocks enough or K is short.
inline int64_t split_count(int64_t blocks, int64_t K, int64_t groups) {
  if (blocks >= kSplitBelowBlocks || K < kSplitMinK) return 1;
  int64_t splits = (kSplitTargetBlocks + blocks - 1) / blocks;
  if (splits > K / kSplitMinDepth) splits = K / kSplitMinDepth;
  if (splits > 65535 / groups) splits = 65535 / groups;
  return splits < 1 ? 1 : splits;
}

// Op over one K range per split, its tiles stored to `partial` ([split][group][M][N]).
template <typename T, typename Op>
struct SplitDepth {
  Op op;
  int64_t groups, K, chunk, M, N;
  T* partial;

  __device__ int64_t rows() const { return M; }
  __device__ int64_t cols() const { return N; }
  __device__ int64_t depth() const { return chunk; }
  __device__ bool a_depth_fastest() const { return op.a_depth_fastest(); }
  __device__ bool b_cols_fastest() const { return op.b_cols_fastest(); }
  __device__ T load_a(int64_t z, int64_t r, int64_t k) const {
    const int64_t gk = (z / groups) * chunk + k;
    return gk < K ? op.load_a(z % groups, r, gk) : T(0);
  }
  __device__ T load_b(int64_t z, int64_t k, int64_t n) const {
    const int64_t gk = (z / groups) * chunk + k;
    return gk < K ? op.load_b(z % groups, gk, n) : T(0);
  }
  __device__ void store(int64_t z, int64_t r, int64_t n, T acc) const { partial[(z * M + r) * N + n] = acc; }
};

template <typename T, typename Op>
__global__ void split_depth_sum(Op op, const T* partial, int64_t splits, int64_t groups, int64_t M, int64_t N) {
  const int64_t MN = M * N, total = groups * MN, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    T sum = partial[i];  // split 0
    for (int64_t s = 1; s < splits; ++s) sum += partial[s * total + i];
    op.store(i / MN, (i % MN) / N, i % N, sum);
  }
}

template <typename T, typename Op, bool kMayBeLarge = true>
void launch_tiles(const char* name, const Op& op, int64_t M, int64_t N, int64_t groups, cudaStream_t stream,
                  bool tf32);

// The tiled product over `splits` K ranges, then their sum (see above).
template <typename T, typename Op>
void launch_split_gemm(const char* name, const Op& op, int64_t M, int64_t N, int64_t K, int64_t groups, int64_t splits,
                       cudaStream_t stream, bool tf32) {
  int64_t chunk = (K + splits - 1) / splits;
  chunk = (chunk + kTileK - 1) / kTileK * kTileK;
  splits = (K + chunk - 1) / chunk;
  struct Partials {  // freed however the launches end
    void* p;
    cudaStream_t stream;
    ~Partials() { device_free(p, stream); }
  } partials{device_alloc(size_t(splits * groups * M * N) * sizeof(T), stream), stream};
  T* partial = static_cast<T*>(partials.p);
  // a split product has too few tiles for the 128-tile kernel: not compiled for it
  launch_tiles<T, SplitDepth<T, Op>, false>(name, SplitDepth<T, Op>{op, groups, K, chunk, M, N, partial}, M, N,
                                            splits * groups, stream, tf32);
  launch((std::string(name) + "_split_sum").c_str(), split_depth_sum<T, Op>, elementwise_grid(groups * M * N),
         dim3(kElementwiseThreads), 0, stream, op, static_cast<const T*>(partial), splits, groups, M, N);
}

// Launches tiled_gemm for op's M x N result in each of `groups` products (the kernel
// reads which of grid x and y walks the columns from cols_on_x); with
// `tf32` and T float, tiled_gemm_tf32 (named `name` + "_tf32") instead.
template <typename T, typename Op, bool kMayBeLarge>
void launch_tiles(const char* name, const Op& op, int64_t M, int64_t N, int64_t groups, cudaStream_t stream,
                  bool tf32) {
  if (M == 0 || N == 0 || groups == 0) return;
  // The 128-tile kernel is compiled for float only (double's 8 x 8 accumulators take
  // most of a thread's registers; and each instance costs the build time).
  constexpr bool kLarge = kMayBeLarge && std::is_same<T, float>::value;
  const bool on_tf32 = tf32 && std::is_same<T, float>::value;
  const bool large = kLarge && !on_tf32 && M >= 128 && N >= 128 &&
                     ((M + 127) / 128) * ((N + 127) / 128) * groups >= kLargeTileBlocks;
  const int64_t tile = large ? 128 : 64;
  const int64_t row_tiles = (M + tile - 1) / tile, col_tiles = (N + tile - 1) / tile;
  // The more numerous tiles go on grid x (up to 2^31 - 1 blocks; y and z take 65535):
  // the columns of a convolution's product span every pixel of the batch.
  const bool cols_on_x = col_tiles > row_tiles;
  const int64_t x_tiles = cols_on_x ? col_tiles : row_tiles, y_tiles = cols_on_x ? row_tiles : col_tiles;
  if (x_tiles > 2147483647 || y_tiles > 65535 || groups > 65535)
    throw std::invalid_argument(std::string(name) + ": a " + std::to_string(M) + " x " + std::to_string(N) +
                                " product in " + std::to_string(groups) + " groups is over the grid's limits");
  const dim3 grid(static_cast<unsigned>(x_tiles), static_cast<unsigned>(y_tiles), static_cast<unsigned>(groups));
  if constexpr (std::is_same<T, float>::value) {
    if (tf32) {
      launch((std::string(name) + "_tf32").c_str(), tiled_gemm_tf32<Op>, grid, dim3(kTf32Threads), 0, stream, op,
             cols_on_x);
      return;
    }
  }
  if constexpr (kLarge) {
    if (large) {
      launch((std::string(name) + "_128").c_str(), tiled_gemm<T, Op, 8>, grid, dim3(kTileThreadsX, kTileThreadsY),
             0, stream, op, cols_on_x);
      return;
    }
  }
  launch(name, tiled_gemm<T, Op, 4>, grid, dim3(kTileThreadsX, kTileThreadsY), 0, stream, op, cols_on_x);
}

// op's product, M x N over depth K (op.depth()), in each of `groups` products: split
// along K where it has few tiles and a long K (split_count), else one launch. Every
// kernel instance costs build time: a caller whose products never split (a convolution's
// forward and data gradient, whose columns run over the batch's pixels) says so with
// kMaySplit = false, one whose products are never large (a filter gradient, K x CRS) with
// kMayBeLarge = false; such a product is still computed, by the other kernel.
template <typename T, bool kMaySplit = true, bool kMayBeLarge = true, typename Op>
void launch_tiled_gemm(const char* name, const Op& op, int64_t M, int64_t N, int64_t K, int64_t groups,
                       cudaStream_t stream, bool tf32 = false) {
  if (M == 0 || N == 0 || groups == 0) return;
  if constexpr (kMaySplit) {
    const int64_t blocks = ((M + kTileM - 1) / kTileM) * ((N + kTileN - 1) / kTileN) * groups;
    const int64_t splits = split_count(blocks, K, groups);
    if (splits > 1) {
      launch_split_gemm<T>(name, op, M, N, K, groups, splits, stream, tf32);
      return;
    }
  }
  launch_tiles<T, Op, kMayBeLarge>(name, op, M, N, groups, stream, tf32);
}

// Plain row-major matrices: C = alpha * op(A) * op(B) + beta * C (gemm.cu's GEMM, and
// the per-image products of conv.cu's im2col_gemm and gemm_1x1).
template <typename T>
struct MatrixProduct {
  int64_t M, N, K;
  bool trans_a, trans_b;
  const T* a;
  int64_t lda;
  const T* b;
  int64_t ldb;
  T* c;
  int64_t ldc;
  T alpha, beta;

  __device__ int64_t rows() const { return M; }
  __device__ int64_t cols() const { return N; }
  __device__ int64_t depth() const { return K; }
  // op(A)[r][k] is A[r][k] (k contiguous) or A[k][r] (r contiguous); likewise for B.
  __device__ bool a_depth_fastest() const { return !trans_a; }
  __device__ bool b_cols_fastest() const { return !trans_b; }
  __device__ T load_a(int64_t, int64_t r, int64_t k) const { return trans_a ? a[k * lda + r] : a[r * lda + k]; }
  __device__ T load_b(int64_t, int64_t k, int64_t n) const { return trans_b ? b[n * ldb + k] : b[k * ldb + n]; }
  __device__ void store(int64_t, int64_t r, int64_t n, T acc) const {
    T* out = c + r * ldc + n;
    *out = beta == T(0) ? alpha * acc : alpha * acc + beta * *out;  // beta 0: C is not read (it may be NaN)
  }
};

}  // namespace MINIFW_CUDA_NS
}  // namespace minifw
