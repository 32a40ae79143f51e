// Winograd minimal filtering F(4x4, 3x3) (Lavin & Gray, "Fast Algorithms for
// Convolutional Neural Networks", 2016). Each 4x4 output tile comes from a 6x6
// input tile: Y = A^T [ (G g G^T) .* (B^T d B) ] A. Summed over input channels,
// the element-wise product becomes 36 independent GEMMs (one per point xi of
// the 6x6 transform domain):
//   M[xi] (Kg x tiles) = U[xi] (Kg x Cg) * V[xi] (Cg x tiles)
// which do 36 multiplies per 16 outputs instead of 144: 4x fewer than direct.
//
// Backward-data of a 3x3, stride-1 convolution is itself a 3x3 convolution of
// dy with the filters flipped and their channel axes swapped, padded by 2 - p;
// it runs through the same forward path.
//
// The transforms are conv_winograd_impl.h's, compiled per ISA (conv_winograd.h).
#include <omp.h>

#include <algorithm>

#include "conv.h"
#include "conv_winograd.h"
#include "conv_winograd_impl.h"
#include "parallel.h"
#include "simd_generic.h"

namespace minifw {
namespace {
constexpr int kTile = 4;   // output tile
constexpr int kAlpha = 6;  // input tile = kTile + 3 - 1
constexpr int kPoints = kAlpha * kAlpha;

// Distance between the 36 transform-domain matrices. The transforms write (or
// read) all 36 at once, so a distance that is a multiple of the page size
// would put all 36 streams in one L1 set and thrash it; an odd number of cache
// lines spreads them over distinct sets.
template <typename T>
int64_t xi_stride(int64_t elems) {
  const int64_t line = 64 / sizeof(T);
  int64_t lines = (elems + line - 1) / line;
  if (lines % 2 == 0) ++lines;
  return lines * line;
}

struct Tiling {
  int64_t th, tw, tiles;  // tile rows, tile cols per image; tiles in the batch
};
Tiling tiling(const ConvShape& s) {
  const int64_t th = (s.Ho + kTile - 1) / kTile, tw = (s.Wo + kTile - 1) / kTile;
  return {th, tw, s.N * th * tw};
}

// The images per call of input_planes and output_planes, which run through their tiles
// kWinogradBlock at a time across the images' boundaries: all of a channel's images,
// unless that leaves fewer than 4 calls per thread (the calls' results do not depend
// on how the images are shared out).
int64_t images_per_call(const ConvShape& s, int64_t channels, int nthreads) {
  if (s.N <= 0 || channels <= 0) return 1;
  const int64_t splits = ceil_div(4 * std::max(1, nthreads), channels);
  return ceil_div(s.N, std::min(splits, s.N));
}

// fn(channel, n0, images) for every channel's images n0 .. n0 + images - 1, images_per_call
// at a time, on up to nthreads threads where the planes hold more than 32768 values.
template <typename F>
void for_each_channel_images(const ConvShape& s, int64_t channels, int64_t plane, int nthreads, F&& fn) {
  const int64_t images = images_per_call(s, channels, nthreads), passes = ceil_div(s.N, images);
  const int64_t units = channels * passes;
#pragma omp parallel for num_threads(nthreads) schedule(static) if (s.N * channels * plane > 32768)
  for (int64_t unit = 0; unit < units; ++unit) {
    const int64_t n0 = unit % passes * images;
    fn(unit / passes, n0, std::min(images, s.N - n0));
  }
}

// V[xi][c][t] = (B^T d B)[xi] for the 6x6 input tile d of tile t, channel c; each
// thread pads its planes in its own plane_elems of `padded`.
template <typename T>
void input_transform(const WinogradKernels<T>& k, const ConvShape& s, const Tiling& tl, const T* x, T* V,
                     T* padded, int64_t plane_elems, int nthreads) {
  const int64_t per_image = tl.th * tl.tw, stride_xi = xi_stride<T>(s.C * tl.tiles);
  std::fill(padded, padded + plane_elems * std::max(1, nthreads), T(0));  // the planes' places are overwritten
  for_each_channel_images(s, s.C, s.H * s.W, nthreads, [&](int64_t c, int64_t n0, int64_t images) {
    k.input_planes(x + (n0 * s.C + c) * s.H * s.W, s.C * s.H * s.W, images, s.H, s.W, s.ph, s.pw, tl.th, tl.tw,
                   V + c * tl.tiles + n0 * per_image, stride_xi, padded + omp_get_thread_num() * plane_elems);
  });
}

// dM[xi][k][t] = (A dy A^T)[xi] for the 4x4 tile dy of dY of tile t, channel k (zero past
// the plane's edge); each thread pads its planes in its own plane_elems of `padded`.
template <typename T>
void grad_transform(const WinogradKernels<T>& k, const ConvShape& s, const Tiling& tl, const T* dy, T* dM,
                    T* padded, int64_t plane_elems, int nthreads) {
  const int64_t per_image = tl.th * tl.tw, stride_xi = xi_stride<T>(s.K * tl.tiles);
  std::fill(padded, padded + plane_elems * std::max(1, nthreads), T(0));
  for_each_channel_images(s, s.K, s.Ho * s.Wo, nthreads, [&](int64_t kk, int64_t n0, int64_t images) {
    k.grad_planes(dy + (n0 * s.K + kk) * s.Ho * s.Wo, s.K * s.Ho * s.Wo, images, s.Ho, s.Wo, tl.th, tl.tw,
                  dM + kk * tl.tiles + n0 * per_image, stride_xi, padded + omp_get_thread_num() * plane_elems);
  });
}

// fn(f0, n) for the filters f0 .. f0 + n - 1, kWinogradBlock at a time, on up to nthreads
// threads where there are more than 1024 filters.
template <typename F>
void for_each_filter_block(int64_t filters, int nthreads, F&& fn) {
  const int64_t blocks = ceil_div(filters, kWinogradBlock);
#pragma omp parallel for num_threads(nthreads) schedule(static) if (filters > 1024)
  for (int64_t b = 0; b < blocks; ++b) fn(b * kWinogradBlock, std::min(kWinogradBlock, filters - b * kWinogradBlock));
}

// U[xi][k][c] = (G g G^T)[xi] for filter g = w[k, c].
template <typename T>
void filter_transform(const WinogradKernels<T>& k, const ConvShape& s, const T* w, T* U, int nthreads) {
  const int64_t filters = s.K * s.Cg(), stride_xi = xi_stride<T>(filters);
  for_each_filter_block(filters, nthreads,
                        [&](int64_t f0, int64_t n) { k.filter_block(w + f0 * 9, n, U + f0, stride_xi); });
}

// y tile = A^T M A, clipped at the output's edge.
template <typename T>
void output_transform(const WinogradKernels<T>& k, const ConvShape& s, const Tiling& tl, const T* M, T* y,
                      int nthreads) {
  const int64_t per_image = tl.th * tl.tw, stride_xi = xi_stride<T>(s.K * tl.tiles);
  for_each_channel_images(s, s.K, s.Ho * s.Wo, nthreads, [&](int64_t kk, int64_t n0, int64_t images) {
    k.output_planes(M + kk * tl.tiles + n0 * per_image, stride_xi, images, tl.th, tl.tw,
                    y + (n0 * s.K + kk) * s.Ho * s.Wo, s.K * s.Ho * s.Wo, s.Ho, s.Wo);
  });
}

// fn(xi, g) for the 36 x groups independent GEMMs, one per thread at a time (each on one
// thread: the results do not depend on the thread count), in parallel where one point's
// GEMMs, all groups together, do more than 65536 multiply-adds (`work`).
template <typename F>
void for_each_point_gemm(const ConvShape& s, int64_t work, int nthreads, F&& fn) {
  const int64_t jobs = kPoints * s.groups;
#pragma omp parallel for num_threads(nthreads) schedule(dynamic, 1) if (work > 65536)
  for (int64_t job = 0; job < jobs; ++job) fn(job / s.groups, job % s.groups);
}

struct WinogradSizes {
  int64_t v, u, m;  // elements of the input, filter and product transforms
  int64_t plane;    // elements of one thread's padded input plane (input_planes)
  int64_t total(int nthreads) const { return v + u + m + plane * std::max(1, nthreads); }
};
// The workspace's parts in that order: V, U (backward-filter: dU), M (dM), the planes.
template <typename T>
struct WinogradBuffers {
  T *V, *U, *M, *padded;
  WinogradBuffers(T* ws, const WinogradSizes& z)
      : V(ws), U(ws + z.v), M(ws + z.v + z.u), padded(ws + z.v + z.u + z.m) {}
};
template <typename T>
WinogradSizes winograd_sizes(const ConvShape& s) {
  const Tiling tl = tiling(s);
  return {kPoints * xi_stride<T>(s.C * tl.tiles), kPoints * xi_stride<T>(s.K * s.Cg()),
          kPoints * xi_stride<T>(s.K * tl.tiles), round_up((kTile * tl.th + 2) * (kTile * tl.tw + 2), 64)};
}

// The backward-data problem as a forward one: input dy (K channels), filters
// (C, Kg, 3, 3), padding 2 - p, output dx.
ConvShape transposed_problem(const ConvShape& s) {
  return make_conv_shape(s.N, s.K, s.Ho, s.Wo, s.C, s.Kg(), 3, 3, 1, 1, 2 - s.ph, 2 - s.pw, 1, 1, s.groups);
}
}  // namespace

template <typename T>
ConvWorkspace winograd_workspace(ConvDir dir, const ConvShape& s, int nthreads) {
  const ConvShape f = dir == ConvDir::backward_data ? transposed_problem(s) : s;
  const WinogradSizes z = winograd_sizes<T>(f);
  int64_t elems = z.total(nthreads);
  if (dir == ConvDir::backward_data) elems += s.w_size();  // flipped filters
  const Tiling tl = tiling(f);
  const int64_t pack = dir == ConvDir::backward_filter  // dU (Kg x Cg) = dM (Kg x tiles) V^T (tiles x Cg)
                           ? gemm_pack_bytes(gemm_kernel<T>(active_isa(), f.Kg()), f.Kg(), f.Cg(), tl.tiles)
                           : gemm_pack_bytes(gemm_kernel<T>(active_isa(), f.Kg()), f.Kg(), tl.tiles, f.Cg());
  return {elems * static_cast<int64_t>(sizeof(T)), pack * std::max(1, nthreads)};
}

template <typename T>
void winograd_forward(const ConvShape& s, const T* x, const T* w, T* y, T* ws, int nthreads) {
  const Tiling tl = tiling(s);
  const WinogradSizes z = winograd_sizes<T>(s);
  const auto [V, U, M, padded] = WinogradBuffers<T>(ws, z);
  const WinogradKernels<T>& k = select_isa_variant<WinogradKernels<T>>();
  input_transform(k, s, tl, x, V, padded, z.plane, nthreads);
  filter_transform(k, s, w, U, nthreads);
  const int64_t Kg = s.Kg(), Cg = s.Cg();
  for_each_point_gemm(s, s.K * Cg * tl.tiles, nthreads, [&](int64_t xi, int64_t g) {
    StridedMatrix<T> a{U + xi * xi_stride<T>(s.K * Cg) + g * Kg * Cg, Cg, false};
    StridedMatrix<T> b{V + xi * xi_stride<T>(s.C * tl.tiles) + g * Cg * tl.tiles, tl.tiles, true};
    gemm_packed<T>(Kg, tl.tiles, Cg, T(1), strided_source(&a), strided_source(&b), T(0),
                   GemmOutput<T>{M + xi * xi_stride<T>(s.K * tl.tiles) + g * Kg * tl.tiles, tl.tiles}, 1);
  });
  output_transform(k, s, tl, M, y, nthreads);
}

template <typename T>
void winograd_backward_data(const ConvShape& s, const T* dy, const T* w, T* dx, T* ws, int nthreads) {
  const ConvShape f = transposed_problem(s);
  const WinogradSizes z = winograd_sizes<T>(f);
  T* flipped = ws + z.total(nthreads);
  const int64_t Kg = s.Kg(), Cg = s.Cg();
  // flipped[g*Cg + c][kout][r][q] = w[g*Kg + kout][c][2 - r][2 - q]
#pragma omp parallel for num_threads(nthreads) schedule(static) if (s.w_size() > 32768)
  for (int64_t cc = 0; cc < s.C; ++cc) {
    const int64_t g = cc / Cg, c = cc % Cg;
    for (int64_t kout = 0; kout < Kg; ++kout) {
      const T* src = w + ((g * Kg + kout) * Cg + c) * 9;
      T* dst = flipped + (cc * Kg + kout) * 9;
      for (int i = 0; i < 9; ++i) dst[i] = src[8 - i];
    }
  }
  winograd_forward(f, dy, flipped, dx, ws, nthreads);
}

// The forward's three linear steps taken back in turn (their transposes): dM = A dY A^T
// per output tile (dY past the plane's edge is 0, as the forward clipped those outputs),
// dU[xi] = sum over tiles of dM[xi] V[xi]^T (36 x groups GEMMs whose inner dimension is
// the tiles), then dw = G^T dU G per filter. The input transform V is the forward's.
template <typename T>
void winograd_backward_filter(const ConvShape& s, const T* x, const T* dy, T* dw, T* ws, int nthreads) {
  const Tiling tl = tiling(s);
  const WinogradSizes z = winograd_sizes<T>(s);
  const auto [V, dU, dM, padded] = WinogradBuffers<T>(ws, z);
  const WinogradKernels<T>& k = select_isa_variant<WinogradKernels<T>>();
  input_transform(k, s, tl, x, V, padded, z.plane, nthreads);
  grad_transform(k, s, tl, dy, dM, padded, z.plane, nthreads);
  const int64_t Kg = s.Kg(), Cg = s.Cg(), filters = s.K * Cg;
  for_each_point_gemm(s, s.K * Cg * tl.tiles, nthreads, [&](int64_t xi, int64_t g) {
    StridedMatrix<T> a{dM + xi * xi_stride<T>(s.K * tl.tiles) + g * Kg * tl.tiles, tl.tiles, false};
    StridedMatrix<T> b{V + xi * xi_stride<T>(s.C * tl.tiles) + g * Cg * tl.tiles, tl.tiles, false};
    gemm_packed<T>(Kg, Cg, tl.tiles, T(1), strided_source(&a), strided_source(&b), T(0),
                   GemmOutput<T>{dU + xi * xi_stride<T>(filters) + g * Kg * Cg, Cg}, 1);
  });
  const int64_t stride_u = xi_stride<T>(filters);
  for_each_filter_block(filters, nthreads,
                        [&](int64_t f0, int64_t n) { k.filter_grad_block(dU + f0, stride_u, n, dw + f0 * 9); });
}

#define MINIFW_INSTANTIATE_WINOGRAD(T)                                                             \
  template ConvWorkspace winograd_workspace<T>(ConvDir, const ConvShape&, int);                   \
  template void winograd_forward<T>(const ConvShape&, const T*, const T*, T*, T*, int);           \
  template void winograd_backward_data<T>(const ConvShape&, const T*, const T*, T*, T*, int);     \
  template void winograd_backward_filter<T>(const ConvShape&, const T*, const T*, T*, T*, int);
MINIFW_INSTANTIATE_WINOGRAD(float)
MINIFW_INSTANTIATE_WINOGRAD(double)

MINIFW_ISA_VARIANT(WinogradKernels<float>, generic, make_winograd_kernels<Vec16<float>>())
MINIFW_ISA_VARIANT(WinogradKernels<double>, generic, make_winograd_kernels<Vec16<double>>())
}  // namespace minifw
