// Our own GEMM: C = alpha * op(A) * op(B) + beta * C, row-major.
//
// The structure is the BLIS/GotoBLAS one: the operands are copied ("packed")
// block by block into micro-panels that the register-blocked micro-kernel reads
// sequentially. Owning the packing step is what makes implicit-GEMM convolution
// possible: a convolution hands the driver a packer that forms tiles of the
// lowered (im2col) matrix on the fly, so the lowered matrix never exists.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "isa_dispatch.h"

namespace minifw {

// A source of one GEMM operand, seen through its "outer" dimension (rows of
// op(A), i.e. M; or columns of op(B), i.e. N) and the shared K dimension.
// pack(self, dst, outer0, outer_len, k0, kc, width) writes the block
// [outer0, outer0 + outer_len) x [k0, k0 + kc) as ceil(outer_len / width)
// micro-panels of kc x width values, the panel p holding
//   dst[(p * kc + k) * width + r] = Op(outer0 + p * width + r, k0 + k),
// zero for r past outer_len.
//
// A source may instead be packed already (B only, see PackedB): `packed` then
// holds, for each K block of packed_kc values (the last one shorter), all the
// panels of the whole outer dimension (packed_outer values), and the driver
// reads them in place.
template <typename T>
struct PackSource {
  void (*pack)(const void* self, T* dst, int64_t outer0, int64_t outer_len, int64_t k0, int64_t kc,
               int width);
  const void* self;
  const T* packed = nullptr;
  int64_t packed_kc = 0, packed_outer = 0;
};

// Where results go: C(i, j) = c[i * ldc + offset(j)]. By default offset(j) = j.
// Convolutions write straight into NCHW tensors, where the GEMM's columns run
// over (image, row, column) of the output: with cols_per_row = V and
// rows_per_image = U, column j = (n * U + u) * V + v lands at
//   offset(j) = n * image_stride + u * row_stride + v * col_stride.
template <typename T>
struct GemmOutput {
  T* c;
  int64_t ldc;
  int64_t cols_per_row = 0;  // 0: plain row-major C, offset(j) = j
  int64_t rows_per_image = 1;
  int64_t col_stride = 1, row_stride = 0, image_stride = 0;

  int64_t offset(int64_t j) const {
    if (cols_per_row == 0) return j;
    const int64_t v = j % cols_per_row, q = j / cols_per_row;
    return (q / rows_per_image) * image_stride + (q % rows_per_image) * row_stride + v * col_stride;
  }
};

// The micro-kernel computes a full MR x NR tile from packed panels:
//   c[i * ldc + j] = alpha * sum_k a[k * MR + i] * b[k * NR + j] + beta * c[i * ldc + j]
// and does not read c when beta == 0 (so NaNs in uninitialized output stay out).
template <typename T>
using MicroKernel = void (*)(int64_t kc, const T* a, const T* b, T* c, int64_t ldc, T alpha, T beta);

template <typename T>
struct GemmKernel {
  int mr, nr;          // register block
  int64_t kc, mc, nc;  // cache blocks: kc x nr panel of B in L1, mc x kc block of A in L2
  MicroKernel<T> fn;
  const char* name;
  // Loop order. false (GotoBLAS): each kc x nc block of B is packed once and
  // A blocks are re-packed for every block of B. true: each mc x kc block of A
  // is packed once and B is re-packed for every block of A; with mc >= M both
  // operands are packed exactly once while nc stays small, which is what an
  // expensive-to-pack B (implicit GEMM) under a small workspace wants.
  bool a_outer = false;
  // An a_outer kernel's blocks for products whose C has more rows than mc
  // (0: none). There A cannot be packed once, and re-packing B for every block
  // of A cost more than re-packing A: such products run in the GotoBLAS order,
  // with B in blocks of tall_nc columns (packed once per K block when N fits)
  // and A in blocks of tall_mc rows.
  int64_t tall_mc = 0, tall_nc = 0;
  // A K of at most kc_whole runs as one block (see k_block in gemm.cpp); 0: kc.
  int64_t kc_whole = 0;
  // fn with non-temporal stores where beta == 0 (c and ldc aligned to 64 bytes), for
  // a C far larger than the caches (gemm_block); nullptr: none (the ISA has no such
  // stores, or a tile's rows are not whole cache lines).
  MicroKernel<T> stream_fn = nullptr;
};

// Columns [n0, n1) of C = alpha * A * B^T + beta * C for a C of few rows, on
// the calling thread, with neither operand packed (gemm_dot.h).
template <typename T>
using DotGemm = void (*)(int64_t M, int64_t n0, int64_t n1, int64_t K, T alpha, const T* A,
                         int64_t lda, const T* B, int64_t ldb, T beta, T* C, int64_t ldc);

// An ISA's register blocks for one dtype, largest first, and its few-row
// kernel: the table of the GEMM's ISA variants (isa_dispatch.h), built in
// gemm.cpp (generic) and gemm_kernels_avx2.cpp / gemm_kernels_avx512.cpp.
template <typename T>
struct GemmKernels {
  static constexpr int kMaxBlocks = 3;
  GemmKernel<T> blocks[kMaxBlocks];
  int count;
  DotGemm<T> dot;
  int dot_nb;  // columns of C per tile of the few-row kernel
};
MINIFW_DECLARE_ISA_VARIANTS(GemmKernels<float>);
MINIFW_DECLARE_ISA_VARIANTS(GemmKernels<double>);

// Per-core data cache sizes in bytes as the CPU reports them (0: unknown).
struct CpuCaches {
  int64_t l1d, l2;
};

// The kernel for a product whose C has M rows: among the ISA's register
// blocks, the one that pads M the least (M = 50 runs as 5 tiles of 10 rows
// rather than 4 tiles of 14, an eighth of them padding). M <= 0: the largest.
// Its cache blocks are the ISA table's capped to this CPU's caches
// (cpu_caches and cache_blocks below); an a_outer kernel's, where M is more
// than its capped mc, are its tall_mc and tall_nc in the GotoBLAS order.
template <typename T>
GemmKernel<T> gemm_kernel(Isa isa, int64_t M = 0);

const CpuCaches& cpu_caches();

// The ISA tables' kc, mc and nc were tuned on a CPU with a 48 KiB L1d and a
// 2 MiB L2 per core, where they fit the bounds below; on any CPU they are
// capped to them: the kc x nr micro-panel of B, reused by every micro-tile of
// A, fits in the L1d, and the blocks that stay in the L2 (mc x kc of A; with
// a_outer also kc x nc of B) each in half of it. Where the L1d cap lowers kc,
// kc_whole keeps the table's kc: a K up to it is not split in two, which
// would store C twice (see k_block in gemm.cpp). (Scaling the blocks in
// proportion to the caches instead made kc 168 and mc 54 on a CPU with a
// 32 KiB L1d and a 512 KiB L2, where 256 and 144 ran a fifth faster.)
template <typename T>
GemmKernel<T> cache_blocks(GemmKernel<T> k, const CpuCaches& caches);

// gemm_kernel as it would be on a CPU with these caches.
template <typename T>
GemmKernel<T> gemm_kernel_for_caches(Isa isa, int64_t M, const CpuCaches& caches);

// Bytes of packing buffer one thread needs for an M x N x K product.
template <typename T>
int64_t gemm_pack_bytes(const GemmKernel<T>& kern, int64_t M, int64_t N, int64_t K);

// The driver. nthreads > 1 splits C into a grid of nthreads blocks computed in
// parallel; nthreads == 1 runs on the calling thread (so callers can run many
// small GEMMs in parallel themselves).
template <typename T>
void gemm_packed(int64_t M, int64_t N, int64_t K, T alpha, PackSource<T> a, PackSource<T> b, T beta,
                 GemmOutput<T> out, int nthreads, const GemmKernel<T>* kernel = nullptr);

// Plain strided GEMM on row-major matrices with leading dimensions.
template <typename T>
void gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, T alpha, const T* A,
          int64_t lda, const T* B, int64_t ldb, T beta, T* C, int64_t ldc, int nthreads);

// op(B) (K x N) packed once for many products C = alpha * op(A) * op(B) + beta * C
// that share it (a recurrent layer's W_hh, used at every time step): the panels
// of every K block, laid out as the driver would pack them for the kernel
// chosen for C's M rows, so that no product re-packs B. Where the plain gemm
// would not pack B at all (a few rows of C: dot products) panels stays empty
// and the products run as the plain gemm does.
template <typename T>
struct PackedB {
  const T* data = nullptr;  // the source: op(B) = trans ? data^T : data, leading dimension ld
  int64_t ld = 0;
  bool trans = false;
  int64_t M = 0, N = 0, K = 0;
  GemmKernel<T> kernel{};
  int64_t kc = 0;         // K block of the panels
  std::vector<T> panels;  // ceil(K / kc) blocks of round_up(N, nr) x kc values
};

// Fills `out` (its buffer is reused when large enough) for products with M rows.
template <typename T>
void pack_b(PackedB<T>& out, bool trans_b, int64_t M, int64_t N, int64_t K, const T* B, int64_t ldb);

// C = alpha * op(A) * op(B) + beta * C with op(B) from pack_b (same M, N, K).
template <typename T>
void gemm(bool trans_a, int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t lda, const PackedB<T>& b,
          T beta, T* C, int64_t ldc, int nthreads);

// Packers for strided row-major matrices (op = identity or transpose); usable
// as building blocks by other algorithms.
template <typename T>
struct StridedMatrix {
  const T* data;
  int64_t ld;
  bool trans;  // Op(outer, k) = trans ? data[k * ld + outer] : data[outer * ld + k]
};
template <typename T>
PackSource<T> strided_source(const StridedMatrix<T>* m);

// 64-byte aligned, grow-only scratch owned by the calling thread.
void* thread_scratch(int slot, size_t bytes);

}  // namespace minifw
