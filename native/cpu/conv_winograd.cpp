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
#include <algorithm>

#include "conv.h"

namespace minifw {
namespace {
constexpr int kTile = 4;   // output tile
constexpr int kAlpha = 6;  // input tile = kTile + 3 - 1
constexpr int kPoints = kAlpha * kAlpha;

// The transforms, written out (zero coefficients dropped), for one line of
// values with stride `is` in and `os` out:
//   B^T = [4  0 -5  0 1 0;  0 -4 -4  1 1 0;  0 4 -4 -1 1 0;
//          0 -2 -1  2 1 0;  0  2 -1 -2 1 0;  0 4  0 -5 0 1]
//   G   = [1/4 0 0; -1/6 -1/6 -1/6; -1/6 1/6 -1/6; 1/24 1/12 1/6; 1/24 -1/12 1/6; 0 0 1]
//   A^T = [1 1 1 1 1 0;  0 1 -1 2 -2 0;  0 1 1 4 4 0;  0 1 -1 8 -8 1]
template <typename T>
inline void apply_bt(const T* d, int64_t is, T* o, int64_t os) {
  const T d0 = d[0], d1 = d[is], d2 = d[2 * is], d3 = d[3 * is], d4 = d[4 * is], d5 = d[5 * is];
  o[0] = T(4) * d0 - T(5) * d2 + d4;
  o[os] = -T(4) * (d1 + d2) + d3 + d4;
  o[2 * os] = T(4) * (d1 - d2) - d3 + d4;
  o[3 * os] = T(2) * (d3 - d1) - d2 + d4;
  o[4 * os] = T(2) * (d1 - d3) - d2 + d4;
  o[5 * os] = T(4) * d1 - T(5) * d3 + d5;
}

template <typename T>
inline void apply_g(const T* g, int64_t is, T* o, int64_t os) {
  const T g0 = g[0], g1 = g[is], g2 = g[2 * is];
  o[0] = g0 / T(4);
  o[os] = -(g0 + g1 + g2) / T(6);
  o[2 * os] = -(g0 - g1 + g2) / T(6);
  o[3 * os] = g0 / T(24) + g1 / T(12) + g2 / T(6);
  o[4 * os] = g0 / T(24) - g1 / T(12) + g2 / T(6);
  o[5 * os] = g2;
}

template <typename T>
inline void apply_at(const T* m, int64_t is, T* o, int64_t os) {
  const T m0 = m[0], m1 = m[is], m2 = m[2 * is], m3 = m[3 * is], m4 = m[4 * is], m5 = m[5 * is];
  const T s12 = m1 + m2, d12 = m1 - m2, s34 = m3 + m4, d34 = m3 - m4;
  o[0] = m0 + s12 + s34;
  o[os] = d12 + T(2) * d34;
  o[2 * os] = s12 + T(4) * s34;
  o[3 * os] = d12 + T(8) * d34 + m5;
}

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

// V[xi][c][t] = (B^T d B)[xi] for the 6x6 input tile d of tile t, channel c.
template <typename T>
void input_transform(const ConvShape& s, const Tiling& tl, const T* x, T* V, int nthreads) {
  const int64_t planes = s.N * s.C, per_image = tl.th * tl.tw, stride_xi = xi_stride<T>(s.C * tl.tiles);
#pragma omp parallel for num_threads(nthreads) schedule(static) if (planes * s.H * s.W > 32768)
  for (int64_t plane = 0; plane < planes; ++plane) {
    const int64_t n = plane / s.C, c = plane % s.C;
    const T* src = x + plane * s.H * s.W;
    for (int64_t ty = 0; ty < tl.th; ++ty) {
      for (int64_t tx = 0; tx < tl.tw; ++tx) {
        const int64_t ih0 = ty * kTile - s.ph, iw0 = tx * kTile - s.pw;
        T d[kAlpha][kAlpha];
        for (int i = 0; i < kAlpha; ++i)
          for (int j = 0; j < kAlpha; ++j) {
            const int64_t ih = ih0 + i, iw = iw0 + j;
            d[i][j] = (ih >= 0 && ih < s.H && iw >= 0 && iw < s.W) ? src[ih * s.W + iw] : T(0);
          }
        T tmp[kAlpha][kAlpha];
        for (int j = 0; j < kAlpha; ++j) apply_bt(&d[0][j], kAlpha, &tmp[0][j], kAlpha);
        T* out = V + c * tl.tiles + n * per_image + ty * tl.tw + tx;
        for (int i = 0; i < kAlpha; ++i) apply_bt(&tmp[i][0], 1, out + i * kAlpha * stride_xi, stride_xi);
      }
    }
  }
}

// U[xi][k][c] = (G g G^T)[xi] for filter g = w[k, c].
template <typename T>
void filter_transform(const ConvShape& s, const T* w, T* U, int nthreads) {
  const int64_t Cg = s.Cg(), stride_xi = xi_stride<T>(s.K * Cg);
#pragma omp parallel for num_threads(nthreads) schedule(static) if (s.K * Cg > 1024)
  for (int64_t kc = 0; kc < s.K * Cg; ++kc) {
    const T* g = w + kc * 9;
    T tmp[kAlpha][3];
    for (int j = 0; j < 3; ++j) apply_g(g + j, 3, &tmp[0][j], 3);
    for (int i = 0; i < kAlpha; ++i) apply_g(&tmp[i][0], 1, U + i * kAlpha * stride_xi + kc, stride_xi);
  }
}

// y tile = A^T M A, clipped at the output's edge.
template <typename T>
void output_transform(const ConvShape& s, const Tiling& tl, const T* M, T* y, int nthreads) {
  const int64_t planes = s.N * s.K, per_image = tl.th * tl.tw, stride_xi = xi_stride<T>(s.K * tl.tiles);
#pragma omp parallel for num_threads(nthreads) schedule(static) if (planes * s.Ho * s.Wo > 32768)
  for (int64_t plane = 0; plane < planes; ++plane) {
    const int64_t n = plane / s.K, k = plane % s.K;
    T* dst = y + plane * s.Ho * s.Wo;
    for (int64_t ty = 0; ty < tl.th; ++ty) {
      for (int64_t tx = 0; tx < tl.tw; ++tx) {
        const T* in = M + k * tl.tiles + n * per_image + ty * tl.tw + tx;
        T m[kAlpha][kAlpha];
        for (int i = 0; i < kAlpha; ++i)
          for (int j = 0; j < kAlpha; ++j) m[i][j] = in[(i * kAlpha + j) * stride_xi];
        T tmp[kTile][kAlpha], o[kTile][kTile];
        for (int j = 0; j < kAlpha; ++j) apply_at(&m[0][j], kAlpha, &tmp[0][j], kAlpha);
        for (int i = 0; i < kTile; ++i) apply_at(&tmp[i][0], 1, &o[i][0], 1);
        const int64_t oh0 = ty * kTile, ow0 = tx * kTile;
        const int64_t hmax = std::min<int64_t>(kTile, s.Ho - oh0), wmax = std::min<int64_t>(kTile, s.Wo - ow0);
        for (int64_t i = 0; i < hmax; ++i)
          for (int64_t j = 0; j < wmax; ++j) dst[(oh0 + i) * s.Wo + ow0 + j] = o[i][j];
      }
    }
  }
}

struct WinogradSizes {
  int64_t v, u, m;  // elements of the input, filter and product transforms
};
template <typename T>
WinogradSizes winograd_sizes(const ConvShape& s) {
  const Tiling tl = tiling(s);
  return {kPoints * xi_stride<T>(s.C * tl.tiles), kPoints * xi_stride<T>(s.K * s.Cg()),
          kPoints * xi_stride<T>(s.K * tl.tiles)};
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
  int64_t elems = z.v + z.u + z.m;
  if (dir == ConvDir::backward_data) elems += s.w_size();  // flipped filters
  const Tiling tl = tiling(f);
  const int64_t pack = gemm_pack_bytes(gemm_kernel<T>(active_isa(), f.Kg()), f.Kg(), tl.tiles, f.Cg());
  return {elems * static_cast<int64_t>(sizeof(T)), pack * std::max(1, nthreads)};
}

template <typename T>
void winograd_forward(const ConvShape& s, const T* x, const T* w, T* y, T* ws, int nthreads) {
  const Tiling tl = tiling(s);
  const WinogradSizes z = winograd_sizes<T>(s);
  T* V = ws;
  T* U = V + z.v;
  T* M = U + z.u;
  input_transform(s, tl, x, V, nthreads);
  filter_transform(s, w, U, nthreads);
  const int64_t Kg = s.Kg(), Cg = s.Cg();
  const int64_t jobs = kPoints * s.groups;
  // 36 x groups independent GEMMs: one per thread at a time.
#pragma omp parallel for num_threads(nthreads) schedule(dynamic, 1) if (s.K * s.Cg() * tl.tiles > 65536)
  for (int64_t job = 0; job < jobs; ++job) {
    const int64_t xi = job / s.groups, g = job % s.groups;
    StridedMatrix<T> a{U + xi * xi_stride<T>(s.K * Cg) + g * Kg * Cg, Cg, false};
    StridedMatrix<T> b{V + xi * xi_stride<T>(s.C * tl.tiles) + g * Cg * tl.tiles, tl.tiles, true};
    gemm_packed<T>(Kg, tl.tiles, Cg, T(1), strided_source(&a), strided_source(&b), T(0),
                   GemmOutput<T>{M + xi * xi_stride<T>(s.K * tl.tiles) + g * Kg * tl.tiles, tl.tiles}, 1);
  }
  output_transform(s, tl, M, y, nthreads);
}

template <typename T>
void winograd_backward_data(const ConvShape& s, const T* dy, const T* w, T* dx, T* ws, int nthreads) {
  const ConvShape f = transposed_problem(s);
  const WinogradSizes z = winograd_sizes<T>(f);
  T* flipped = ws + z.v + z.u + z.m;
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

#define MINIFW_INSTANTIATE_WINOGRAD(T)                                                             \
  template ConvWorkspace winograd_workspace<T>(ConvDir, const ConvShape&, int);                   \
  template void winograd_forward<T>(const ConvShape&, const T*, const T*, T*, T*, int);           \
  template void winograd_backward_data<T>(const ConvShape&, const T*, const T*, T*, T*, int);
MINIFW_INSTANTIATE_WINOGRAD(float)
MINIFW_INSTANTIATE_WINOGRAD(double)
}  // namespace minifw
