#include "gemm.h"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>

#include "gemm_dot.h"
#include "gemm_microkernel.h"
#include "parallel.h"
#include "simd_generic.h"

namespace minifw {

namespace {
void sgemm_generic_6x8(int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                       float alpha, float beta) {
  micro_kernel_impl<Vec16<float>, 6, 2>(kc, a, b, c, ldc, alpha, beta);
}
void dgemm_generic_6x4(int64_t kc, const double* a, const double* b, double* c, int64_t ldc,
                       double alpha, double beta) {
  micro_kernel_impl<Vec16<double>, 6, 2>(kc, a, b, c, ldc, alpha, beta);
}

// A C of at least this many bytes is written with non-temporal stores (gemm_packed).
constexpr double kLargeOutputBytes = 32.0 * 1024 * 1024;

// Split `total` into blocks of at most `block`, all about the same size (a
// multiple of `align`), so a K of 400 with kc = 384 becomes 2 x 200, not 384 + 16.
inline int64_t balanced_block(int64_t total, int64_t block, int64_t align) {
  if (total <= block) return total;
  int64_t nblocks = ceil_div(total, block);
  return std::min(block, round_up(ceil_div(total, nblocks), align));
}

struct Scratch {
  void* ptr = nullptr;
  size_t bytes = 0;
  ~Scratch() { std::free(ptr); }
};
}  // namespace

void* thread_scratch(int slot, size_t bytes) {
  thread_local Scratch slots[4];
  Scratch& s = slots[slot];
  if (s.bytes < bytes) {
    std::free(s.ptr);
    size_t rounded = (bytes + 63) / 64 * 64;
    s.ptr = std::aligned_alloc(64, rounded);
    if (!s.ptr) {
      s.bytes = 0;
      throw std::bad_alloc();
    }
    s.bytes = rounded;
  }
  return s.ptr;
}

MINIFW_ISA_VARIANT(GemmKernels<float>, generic,
                   {{{6, 8, 256, 120, 1024, sgemm_generic_6x8, "generic 6x8"}}, 1,
                    dot_gemm_columns<Vec16<float>, 2, 2>, 2})
MINIFW_ISA_VARIANT(GemmKernels<double>, generic,
                   {{{6, 4, 256, 96, 1024, dgemm_generic_6x4, "generic 6x4"}}, 1,
                    dot_gemm_columns<Vec16<double>, 2, 2>, 2})

const CpuCaches& cpu_caches() {
  static const CpuCaches caches = [] {
    CpuCaches c{0, 0};
#if defined(_SC_LEVEL1_DCACHE_SIZE) && defined(_SC_LEVEL2_CACHE_SIZE)
    c.l1d = std::max<long>(0, sysconf(_SC_LEVEL1_DCACHE_SIZE));
    c.l2 = std::max<long>(0, sysconf(_SC_LEVEL2_CACHE_SIZE));
#endif
    return c;
  }();
  return caches;
}

template <typename T>
GemmKernel<T> cache_blocks(GemmKernel<T> k, const CpuCaches& caches) {
  const int64_t size = sizeof(T);
  if (caches.l1d > 0) {  // the kc x nr micro-panel of B, reused by every micro-tile of A, stays in the L1d
    const int64_t kc_max = caches.l1d / (k.nr * size) / 8 * 8;
    k.kc_whole = std::max(k.kc, k.kc_whole);
    k.kc = std::max<int64_t>(64, std::min(k.kc, kc_max));
  }
  if (caches.l2 > 0) {  // the mc x kc block of A (with a_outer also B's kc x nc) in half the L2
    const int64_t half = caches.l2 / 2;
    k.mc = std::max<int64_t>(k.mr, std::min(k.mc, half / (k.kc * size) / k.mr * k.mr));
    if (k.a_outer) k.nc = std::max<int64_t>(k.nr, std::min(k.nc, half / (k.kc * size) / k.nr * k.nr));
  }
  return k;
}

// Of the blocks (largest first), the one with the least padded work for M
// rows. A shorter block reuses each loaded B vector fewer times, so it must
// save more than 1/16 of the work to win.
template <typename T>
GemmKernel<T> gemm_kernel(Isa isa, int64_t M) {
  return gemm_kernel_for_caches<T>(isa, M, cpu_caches());
}

template <typename T>
GemmKernel<T> gemm_kernel_for_caches(Isa isa, int64_t M, const CpuCaches& caches) {
  const GemmKernels<T>& ks = select_isa_variant<GemmKernels<T>>(isa);
  int best = 0;
  if (M <= 0) return cache_blocks(ks.blocks[best], caches);
  const int64_t mr0 = ks.blocks[0].mr;
  double best_cost = static_cast<double>(ceil_div(M, mr0) * mr0);
  for (int b = 1; b < ks.count; ++b) {
    const int64_t mr = ks.blocks[b].mr;
    const double cost = static_cast<double>(ceil_div(M, mr) * mr) * (1.0 + 1.0 / 16);
    if (cost < best_cost) best_cost = cost, best = b;
  }
  GemmKernel<T> k = cache_blocks(ks.blocks[best], caches);
  if (k.a_outer && k.tall_mc > 0 && M > k.mc) {
    k.a_outer = false;
    k.mc = k.tall_mc;
    k.nc = k.tall_nc;
    k = cache_blocks(k, caches);
  }
  return k;
}

// The K block for a product whose C block has `rows` rows. K is split into
// blocks of at most kc, except that a K of at most kc_whole runs whole when
// the A block stays within the planned mc x kc: each further K block reads and
// writes C once more, which on a 32 KiB L1d (kc 256) cost AlexNet conv1's
// lowered 96 x 48400 x 363 more than its B micro-panel outgrowing the L1d
// (a Zen 4: 163 -> 173 GFLOP/s, OpenBLAS 175).
namespace {
template <typename T>
int64_t k_block(const GemmKernel<T>& kern, int64_t rows, int64_t K) {
  const int64_t a_rows = round_up(std::min(rows, kern.mc), kern.mr);
  if (K <= kern.kc_whole && a_rows * K <= kern.mc * kern.kc) return K;
  return balanced_block(K, kern.kc, 8);
}
}  // namespace

template <typename T>
int64_t gemm_pack_bytes(const GemmKernel<T>& kern, int64_t M, int64_t N, int64_t K) {
  if (M <= 0 || N <= 0 || K <= 0) return 0;
  int64_t kc = k_block(kern, M, K);
  int64_t mc = round_up(std::min(M, kern.mc), kern.mr);
  int64_t nc = round_up(std::min(N, kern.nc), kern.nr);
  return (mc * kc + kc * nc) * static_cast<int64_t>(sizeof(T));
}

namespace {
template <typename T>
void scale_output(int64_t m0, int64_t m1, int64_t n0, int64_t n1, T beta, const GemmOutput<T>& out) {
  for (int64_t i = m0; i < m1; ++i) {
    T* row = out.c + i * out.ldc;
    for (int64_t j = n0; j < n1; ++j) {
      T& v = row[out.offset(j)];
      v = beta == T(0) ? T(0) : beta * v;
    }
  }
}

// Non-temporal stores need the ordering of a store fence before other threads read C.
inline void store_fence() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_sfence();
#endif
}

// One thread's share: rows [m0, m1) and columns [n0, n1) of C, summed over the
// K range [k0, k1) (the whole K unless the product is split along K). With
// `large_c` (gemm_packed), full tiles of C are written with non-temporal stores
// where K runs as one block and beta is 0.
template <typename T>
void gemm_block(const GemmKernel<T>& kern, int64_t m0, int64_t m1, int64_t n0, int64_t n1,
                int64_t k0, int64_t k1, T alpha, const PackSource<T>& a, const PackSource<T>& b,
                T beta, const GemmOutput<T>& out, bool large_c = false) {
  if (m0 >= m1 || n0 >= n1) return;
  if (k0 >= k1) return scale_output(m0, m1, n0, n1, beta, out);
  const int mr = kern.mr, nr = kern.nr;
  const int64_t K = k1 - k0;
  const int64_t kc_step = b.packed ? b.packed_kc : k_block(kern, m1 - m0, K);
  const int64_t mc_step = round_up(balanced_block(m1 - m0, kern.mc, mr), mr);
  const int64_t nc_step = round_up(balanced_block(n1 - n0, kern.nc, nr), nr);
  T* pack_a = static_cast<T*>(thread_scratch(0, sizeof(T) * mc_step * kc_step));
  // A pre-packed B is read in place: its K block pc starts at Npad * pc, and
  // within it the panel of columns from jc (a multiple of nr) at jc * kc.
  T* pack_b = b.packed ? nullptr : static_cast<T*>(thread_scratch(1, sizeof(T) * kc_step * nc_step));
  const int64_t Npad = b.packed ? round_up(b.packed_outer, nr) : 0;
  const bool stream = large_c && kern.stream_fn && kc_step >= K && beta == T(0) && out.cols_per_row == 0 &&
                      (out.ldc * sizeof(T)) % 64 == 0;
  alignas(64) T tile[32 * 64];  // an edge or scattered tile (mr * nr <= 32 * 64)
  int64_t coff[64];

  // The macro-kernel: one packed mc x kc block of A times one packed kc x nc
  // block of B, micro-tile by micro-tile, into C at (ic, jc).
  auto macro = [&](int64_t ic, int64_t mc, int64_t jc, int64_t nc, int64_t kc, T beta_k) {
    for (int64_t jr = 0; jr < nc; jr += nr) {
      const int64_t nrr = std::min<int64_t>(nr, nc - jr);
      const T* bp = pack_b + jr * kc;
      // Column offsets of this strip of C; a full strip whose columns are
      // adjacent in memory goes straight to the micro-kernel.
      for (int64_t s = 0; s < nrr; ++s) coff[s] = out.offset(jc + jr + s);
      const bool direct = nrr == nr && coff[nr - 1] - coff[0] == nr - 1;
      for (int64_t ir = 0; ir < mc; ir += mr) {
        const int64_t mrr = std::min<int64_t>(mr, mc - ir);
        const T* ap = pack_a + ir * kc;
        const int64_t i = ic + ir;
        if (mrr == mr && direct) {
          T* c = out.c + i * out.ldc + coff[0];
          const bool aligned = reinterpret_cast<uintptr_t>(c) % 64 == 0;
          (stream && aligned ? kern.stream_fn : kern.fn)(kc, ap, bp, c, out.ldc, alpha, beta_k);
          continue;
        }
        kern.fn(kc, ap, bp, tile, nr, T(1), T(0));
        for (int64_t r = 0; r < mrr; ++r) {
          T* crow = out.c + (i + r) * out.ldc;
          for (int64_t s = 0; s < nrr; ++s) {
            T& dst = crow[coff[s]];
            dst = beta_k == T(0) ? alpha * tile[r * nr + s] : alpha * tile[r * nr + s] + beta_k * dst;
          }
        }
      }
    }
  };

  if (kern.a_outer) {
    for (int64_t ic = m0; ic < m1; ic += mc_step) {
      const int64_t mc = std::min(mc_step, m1 - ic);
      for (int64_t pc = k0; pc < k1; pc += kc_step) {
        const int64_t kc = std::min(kc_step, k1 - pc);
        a.pack(a.self, pack_a, ic, mc, pc, kc, mr);
        for (int64_t jc = n0; jc < n1; jc += nc_step) {
          const int64_t nc = std::min(nc_step, n1 - jc);
          if (b.packed) pack_b = const_cast<T*>(b.packed) + Npad * pc + jc * kc;
          else b.pack(b.self, pack_b, jc, nc, pc, kc, nr);
          macro(ic, mc, jc, nc, kc, pc == k0 ? beta : T(1));  // later K blocks accumulate
        }
      }
    }
    if (stream) store_fence();
    return;
  }
  for (int64_t jc = n0; jc < n1; jc += nc_step) {
    const int64_t nc = std::min(nc_step, n1 - jc);
    for (int64_t pc = k0; pc < k1; pc += kc_step) {
      const int64_t kc = std::min(kc_step, k1 - pc);
      if (b.packed) pack_b = const_cast<T*>(b.packed) + Npad * pc + jc * kc;
      else b.pack(b.self, pack_b, jc, nc, pc, kc, nr);
      for (int64_t ic = m0; ic < m1; ic += mc_step) {
        const int64_t mc = std::min(mc_step, m1 - ic);
        a.pack(a.self, pack_a, ic, mc, pc, kc, mr);
        macro(ic, mc, jc, nc, kc, pc == k0 ? beta : T(1));
      }
    }
  }
  if (stream) store_fence();
}
// C = alpha * A * B + beta * C with K split into nthreads ranges: thread 0 adds
// its partial product into C (with beta), the others write theirs to private
// M x N buffers, which are then added into C, the rows shared among threads.
// (Kept out of line: inlined into gemm_packed it made GCC compile the common
// path's blocks a fifth slower, LeNet conv2's backward-filter 2.2 -> 2.7 ms.)
template <typename T>
__attribute__((noinline)) void gemm_split_k(const GemmKernel<T>& kern, int64_t M, int64_t N, int64_t K, T alpha,
                  const PackSource<T>& a, const PackSource<T>& b, T beta, const GemmOutput<T>& out,
                  int nthreads) {
  T* partials = static_cast<T*>(thread_scratch(2, sizeof(T) * M * N * (nthreads - 1)));
  const int64_t k_units = ceil_div(K, 8);  // ranges start at multiples of 8
#pragma omp parallel num_threads(nthreads)
  {
    const int t = omp_get_thread_num(), threads = omp_get_num_threads();
    int64_t u0, u1;
    split_range(k_units, threads, t, u0, u1);
    const int64_t k0 = std::min(K, u0 * 8), k1 = std::min(K, u1 * 8);
    if (t == 0) {
      gemm_block(kern, 0, M, 0, N, k0, k1, alpha, a, b, beta, out);
    } else {
      // an empty K range writes zeros (scale_output with beta = 0)
      gemm_block(kern, 0, M, 0, N, k0, k1, alpha, a, b, T(0),
                 GemmOutput<T>{partials + (t - 1) * M * N, N});
    }
#pragma omp barrier
    int64_t i0, i1;
    split_range(M, threads, t, i0, i1);
    for (int64_t i = i0; i < i1; ++i) {
      T* crow = out.c + i * out.ldc;
      for (int p = 1; p < threads; ++p) {
        const T* prow = partials + (p - 1) * M * N + i * N;
        if (out.cols_per_row == 0) {
          for (int64_t j = 0; j < N; ++j) crow[j] += prow[j];
        } else {
          for (int64_t j = 0; j < N; ++j) crow[out.offset(j)] += prow[j];
        }
      }
    }
  }
}
}  // namespace

template <typename T>
void gemm_packed(int64_t M, int64_t N, int64_t K, T alpha, PackSource<T> a, PackSource<T> b, T beta,
                 GemmOutput<T> out, int nthreads, const GemmKernel<T>* kernel) {
  if (M <= 0 || N <= 0) return;
  const GemmKernel<T> kern = kernel ? *kernel : gemm_kernel<T>(active_isa(), M);
  // A C this large is not read again soon from the caches (AlexNet's fc6 weight
  // gradient, 4096 x 9216 from K = 16, took 13.1 ms with plain stores, which read
  // its 151 MB into the cache first, and 4.7 ms with non-temporal ones).
  const bool large_c = static_cast<double>(M) * N * sizeof(T) >= kLargeOutputBytes;
  // Tiny products do not pay for waking threads.
  if (nthreads <= 1 || static_cast<double>(M) * N * K < 64.0 * 64 * 64) {
    gemm_block(kern, 0, M, 0, N, 0, K, alpha, a, b, beta, out, large_c);
    return;
  }
  // A grid of tm x tn blocks over C, in units of micro-tiles, chosen for the
  // least work in the largest block: its multiply-adds (padded tiles) plus its
  // packing, which copies from memory at a fraction of the multiply-add rate.
  // Every thread packs its own share of both operands, the inner-loop operand
  // once per block of the outer one: for a wide C (a convolution's M = 128
  // filters by N = 11664 pixels) splitting M would make both threads pack all
  // of the large B, splitting N packs each half of it once.
  constexpr double kPackCost = 16;  // one packed element ~ 16 multiply-adds per row
  const int64_t tiles_m = ceil_div(M, kern.mr), tiles_n = ceil_div(N, kern.nr);
  int best_tm = 1;
  double best_cost = -1;
  for (int tm = 1; tm <= nthreads; ++tm) {
    if (nthreads % tm) continue;
    const int tn = nthreads / tm;
    const int64_t mt = ceil_div(tiles_m, tm) * kern.mr, nt = ceil_div(tiles_n, tn) * kern.nr;
    const int64_t packed = kern.a_outer ? mt + nt * ceil_div(mt, kern.mc) : nt + mt * ceil_div(nt, kern.nc);
    const double cost = static_cast<double>(mt) * nt + kPackCost * packed;
    if (best_cost < 0 || cost < best_cost) {
      best_cost = cost;
      best_tm = tm;
    }
  }
  // The other way to share the work: split K. Each thread then computes all of C
  // from its share of both operands (nothing is packed twice) and the partial
  // products are summed at the end. It wins when C has too few tiles to share
  // (a backward-filter GEMM: C is a small filter bank, K runs over every pixel
  // of the batch) and K is long enough to pay for the sum. Its K ranges follow
  // the thread count, and so do the bits of the result: deterministic mode never
  // takes it, so every element of C is summed over K by one thread in one order.
  const int64_t Mp = tiles_m * kern.mr, Np = tiles_n * kern.nr;
  const double split_k_cost =
      (static_cast<double>(Mp) * Np + kPackCost * (Mp + Np)) / nthreads +
      static_cast<double>(M) * N * nthreads * kPackCost / std::max<int64_t>(K, 1);
  if (!b.packed && !deterministic() && K >= 2 * kern.kc * nthreads && split_k_cost < 0.8 * best_cost) {
    gemm_split_k(kern, M, N, K, alpha, a, b, beta, out, nthreads);
    return;
  }
  const int tm = best_tm, tn = nthreads / tm;
#pragma omp parallel num_threads(nthreads)
  {
    const int t = omp_get_thread_num();
    int64_t mt0, mt1, nt0, nt1;
    split_range(tiles_m, tm, t / tn, mt0, mt1);
    split_range(tiles_n, tn, t % tn, nt0, nt1);
    gemm_block(kern, mt0 * kern.mr, std::min(M, mt1 * kern.mr), nt0 * kern.nr,
               std::min(N, nt1 * kern.nr), 0, K, alpha, a, b, beta, out, large_c);
  }
}

namespace {
// Micro-panels of width W (a compile-time constant for the register blocks'
// widths, so that the copies unroll; W = 0: `width` at run time).
template <typename T, int W>
void pack_strided_w(const StridedMatrix<T>& m, T* dst, int64_t outer0, int64_t outer_len, int64_t k0, int64_t kc,
                    int width) {
  if (W) width = W;
  if (m.trans) {
    // Op(outer, k) = data[k * ld + outer]: row k of the source holds all the
    // block's outer values contiguously.
    const int64_t full = outer_len / width, tail = outer_len % width;
    if (W) {
      // A known width: G panels at a time, each source row's G * W values
      // copied as G blocks, so that every panel is written in order and the
      // rows, ld apart, are fetched a few ahead of their use. (Dealing each
      // whole row out to all the panels at once writes to as many places,
      // kc * W apart, as there are panels; the GEMM then spent half as long
      // again packing.)
      constexpr int64_t G = 4, kAhead = 8;
      for (int64_t p0 = 0; p0 < full; p0 += G) {
        const int64_t g = std::min(G, full - p0);
        T* dp = dst + p0 * kc * W;
        const T* sp = m.data + k0 * m.ld + outer0 + p0 * W;
        for (int64_t k = 0; k < kc; ++k) {
          for (int64_t q = 0; q < g; ++q) {
            if (k + kAhead < kc) __builtin_prefetch(sp + (k + kAhead) * m.ld + q * W);
            std::memcpy(dp + (q * kc + k) * W, sp + k * m.ld + q * W, sizeof(T) * W);
          }
        }
      }
      if (tail) {
        T* dp = dst + full * kc * W;
        const T* sp = m.data + k0 * m.ld + outer0 + full * W;
        for (int64_t k = 0; k < kc; ++k) {
          int r = 0;
          for (; r < tail; ++r) dp[k * W + r] = sp[k * m.ld + r];
          for (; r < W; ++r) dp[k * W + r] = T(0);
        }
      }
      return;
    }
    // Any width: walk the source row by row (one long sequential read each)
    // and deal each row out to the micro-panels.
    for (int64_t k = 0; k < kc; ++k) {
      const T* s = m.data + (k0 + k) * m.ld + outer0;
      T* d = dst + k * width;
      for (int64_t p = 0; p < full; ++p) {
        T* dp = d + p * kc * width;
        const T* sp = s + p * width;
        for (int r = 0; r < width; ++r) dp[r] = sp[r];
      }
      if (tail) {
        T* dp = d + full * kc * width;
        const T* sp = s + full * width;
        int r = 0;
        for (; r < tail; ++r) dp[r] = sp[r];
        for (; r < width; ++r) dp[r] = T(0);
      }
    }
    return;
  }
  // Op(outer, k) = data[outer * ld + k]: each micro-panel interleaves `width`
  // source rows. A full panel with a known width reads its rows side by side
  // (one stream each) and writes the panel in order; otherwise each source row
  // is read sequentially and written down a column of the panel, in slices of
  // kSlice values of k, so that the slice (kSlice x width) being written stays
  // in the L1 while all the rows are dealt into it.
  constexpr int64_t kSlice = 64;
  for (int64_t p = 0; p < outer_len; p += width) {
    const int64_t w = std::min<int64_t>(width, outer_len - p);
    T* d = dst + p * kc;
    const T* src = m.data + (outer0 + p) * m.ld + k0;
    if (W && w == W) {
      const T* rows[W > 0 ? W : 1];
      for (int r = 0; r < W; ++r) rows[r] = src + r * m.ld;
      for (int64_t k = 0; k < kc; ++k) {
#pragma GCC unroll 32
        for (int r = 0; r < W; ++r) d[k * W + r] = rows[r][k];
      }
      continue;
    }
    for (int64_t ks = 0; ks < kc; ks += kSlice) {
      const int64_t ke = std::min(kc, ks + kSlice);
      for (int64_t r = 0; r < w; ++r) {
        const T* s = src + r * m.ld;
        for (int64_t k = ks; k < ke; ++k) d[k * width + r] = s[k];
      }
    }
    for (int64_t r = w; r < width; ++r)
      for (int64_t k = 0; k < kc; ++k) d[k * width + r] = T(0);
  }
}

template <typename T>
void pack_strided(const void* self, T* dst, int64_t outer0, int64_t outer_len, int64_t k0,
                  int64_t kc, int width) {
  const auto& m = *static_cast<const StridedMatrix<T>*>(self);
  switch (width) {
    case 4: return pack_strided_w<T, 4>(m, dst, outer0, outer_len, k0, kc, width);
    case 6: return pack_strided_w<T, 6>(m, dst, outer0, outer_len, k0, kc, width);
    case 8: return pack_strided_w<T, 8>(m, dst, outer0, outer_len, k0, kc, width);
    case 10: return pack_strided_w<T, 10>(m, dst, outer0, outer_len, k0, kc, width);
    case 12: return pack_strided_w<T, 12>(m, dst, outer0, outer_len, k0, kc, width);
    case 14: return pack_strided_w<T, 14>(m, dst, outer0, outer_len, k0, kc, width);
    case 16: return pack_strided_w<T, 16>(m, dst, outer0, outer_len, k0, kc, width);
    case 24: return pack_strided_w<T, 24>(m, dst, outer0, outer_len, k0, kc, width);
    case 32: return pack_strided_w<T, 32>(m, dst, outer0, outer_len, k0, kc, width);
    default: return pack_strided_w<T, 0>(m, dst, outer0, outer_len, k0, kc, width);
  }
}
}  // namespace

template <typename T>
PackSource<T> strided_source(const StridedMatrix<T>* m) {
  return {&pack_strided<T>, m};
}

// C rows up to which, and K from which, A * B^T runs as dot products.
constexpr int64_t kDotMaxRows = 16, kDotMinK = 64;

// Whether gemm runs this product as dot products (no packing, see gemm below).
inline bool dot_product_shape(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K) {
  return !trans_a && trans_b && M > 0 && M <= kDotMaxRows && N > 0 && K >= kDotMinK;
}

template <typename T>
void gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, T alpha, const T* A,
          int64_t lda, const T* B, int64_t ldb, T beta, T* C, int64_t ldc, int nthreads) {
  // A few rows of C times a B given transposed (an inner product at a small
  // batch): dot products, no packing. The threads share C's columns, so each
  // streams its part of B once.
  if (dot_product_shape(trans_a, trans_b, M, N, K)) {
    const GemmKernels<T>& ks = select_isa_variant<GemmKernels<T>>(active_isa());
    const int64_t units = ceil_div(N, ks.dot_nb);
    const int threads = static_cast<double>(M) * N * K < 64.0 * 64 * 64
                            ? 1
                            : static_cast<int>(std::min<int64_t>(std::max(nthreads, 1), units));
    if (threads <= 1) return ks.dot(M, 0, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
#pragma omp parallel num_threads(threads)
    {
      int64_t u0, u1;
      split_range(units, omp_get_num_threads(), omp_get_thread_num(), u0, u1);
      const int64_t n0 = std::min(N, u0 * ks.dot_nb), n1 = std::min(N, u1 * ks.dot_nb);
      if (n0 < n1) ks.dot(M, n0, n1, K, alpha, A, lda, B, ldb, beta, C, ldc);
    }
    return;
  }
  StridedMatrix<T> a{A, lda, trans_a};
  StridedMatrix<T> b{B, ldb, !trans_b};  // B's outer dimension is its column index
  gemm_packed<T>(M, N, K, alpha, strided_source(&a), strided_source(&b), beta, GemmOutput<T>{C, ldc},
                 nthreads);
}

template <typename T>
void pack_b(PackedB<T>& out, bool trans_b, int64_t M, int64_t N, int64_t K, const T* B, int64_t ldb) {
  out.data = B, out.ld = ldb, out.trans = trans_b, out.M = M, out.N = N, out.K = K;
  out.kernel = gemm_kernel<T>(active_isa(), M);
  out.kc = K > 0 ? k_block(out.kernel, M, K) : 0;
  // A few rows of C times a transposed B run as dot products, which read B as it is.
  if (M <= 0 || N <= 0 || K <= 0 || dot_product_shape(false, trans_b, M, N, K)) {
    out.panels.clear();
    return;
  }
  const int64_t Npad = round_up(N, out.kernel.nr);
  out.panels.resize(Npad * K);
  const StridedMatrix<T> b{B, ldb, !trans_b};  // B's outer dimension is its column index
  for (int64_t pc = 0; pc < K; pc += out.kc) {
    const int64_t kc = std::min(out.kc, K - pc);
    pack_strided<T>(&b, out.panels.data() + Npad * pc, 0, N, pc, kc, out.kernel.nr);
  }
}

template <typename T>
void gemm(bool trans_a, int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t lda, const PackedB<T>& b,
          T beta, T* C, int64_t ldc, int nthreads) {
  if (b.panels.empty() || M != b.M || N != b.N || K != b.K)
    return gemm<T>(trans_a, b.trans, M, N, K, alpha, A, lda, b.data, b.ld, beta, C, ldc, nthreads);
  StridedMatrix<T> a{A, lda, trans_a};
  PackSource<T> packed{nullptr, nullptr, b.panels.data(), b.kc, N};
  gemm_packed<T>(M, N, K, alpha, strided_source(&a), packed, beta, GemmOutput<T>{C, ldc}, nthreads, &b.kernel);
}

#define MINIFW_INSTANTIATE_GEMM(T)                                                                  \
  template GemmKernel<T> gemm_kernel<T>(Isa, int64_t);                                             \
  template GemmKernel<T> cache_blocks<T>(GemmKernel<T>, const CpuCaches&);                        \
  template GemmKernel<T> gemm_kernel_for_caches<T>(Isa, int64_t, const CpuCaches&);                \
  template int64_t gemm_pack_bytes<T>(const GemmKernel<T>&, int64_t, int64_t, int64_t);            \
  template void gemm_packed<T>(int64_t, int64_t, int64_t, T, PackSource<T>, PackSource<T>, T,      \
                               GemmOutput<T>, int, const GemmKernel<T>*);                          \
  template PackSource<T> strided_source<T>(const StridedMatrix<T>*);                               \
  template void gemm<T>(bool, bool, int64_t, int64_t, int64_t, T, const T*, int64_t, const T*,     \
                        int64_t, T, T*, int64_t, int);                                                \
  template void pack_b<T>(PackedB<T>&, bool, int64_t, int64_t, int64_t, const T*, int64_t);        \
  template void gemm<T>(bool, int64_t, int64_t, int64_t, T, const T*, int64_t, const PackedB<T>&, T, T*, \
                        int64_t, int);
MINIFW_INSTANTIATE_GEMM(float)
MINIFW_INSTANTIATE_GEMM(double)

}  // namespace minifw
