// Winograd F(4x4, 3x3)'s transforms (conv_winograd.h) over a SIMD traits struct V
// (simd_generic.h, simd_avx2.h, simd_avx512.h), compiled once per ISA
// (conv_winograd.cpp, conv_winograd_avx2.cpp, conv_winograd_avx512.cpp). Anonymous
// namespace, and no standard-library templates (whose one kept copy could be another
// ISA's): each ISA's copy stays in its own translation unit.
//
// Each transform is two passes of its 1-D form, first down the columns of the tile, then
// along its rows:
//   B^T = [4  0 -5  0 1 0;  0 -4 -4  1 1 0;  0 4 -4 -1 1 0;
//          0 -2 -1  2 1 0;  0  2 -1 -2 1 0;  0 4  0 -5 0 1]
//   G   = [1/4 0 0; -1/6 -1/6 -1/6; -1/6 1/6 -1/6; 1/24 1/12 1/6; 1/24 -1/12 1/6; 0 0 1]
//   A^T = [1 1 1 1 1 0;  0 1 -1 2 -2 0;  0 1 1 4 4 0;  0 1 -1 8 -8 1]
// Every pass runs along the tiles of a few planes (or along filters), one vector of them
// at a time: the transform domain holds them contiguously, and a gather (input) or scatter
// (output) turns each tile's values into such rows. Rows of the local arrays hold whole
// vectors (their tails are zeros); rows of the transform domain are read and written
// exactly, the last vector masked.
#pragma once
#include <cstdint>

#include "conv_winograd.h"

namespace minifw {
namespace {

constexpr int64_t kWinoChunk = kWinogradBlock;  // tiles (or filters) per pass
static_assert(kWinoChunk % 16 == 0, "a pass is whole vectors of every ISA");

// (Internal helpers, not parallel.h's round_up nor std::min and std::fill: the linker
// keeps one copy of an inline function, and it could be the one compiled with this
// file's ISA flags.)
template <typename V>
inline int64_t whole_vectors(int64_t n) {
  return (n + V::lanes - 1) / V::lanes * V::lanes;
}
inline int64_t wino_min(int64_t a, int64_t b) { return a < b ? a : b; }
inline int64_t wino_clamp(int64_t x, int64_t lo, int64_t hi) { return x < lo ? lo : x > hi ? hi : x; }
// The tile after (image, ty, tx), in the transform domain's order.
inline void next_tile(int64_t& image, int64_t& ty, int64_t& tx, int64_t th, int64_t tw) {
  if (++tx < tw) return;
  tx = 0;
  if (++ty < th) return;
  ty = 0;
  ++image;
}
template <typename T>
inline void wino_fill(T* begin, T* end, T value) {
  for (T* p = begin; p < end; ++p) *p = value;
}

template <typename V, bool kExact>
inline typename V::reg load_at(const typename V::T* p, int64_t left) {
  return kExact && left < V::lanes ? V::load_n(p, left) : V::load(p);
}
template <typename V, bool kExact>
inline void store_at(typename V::T* p, typename V::reg x, int64_t left) {
  if (kExact && left < V::lanes)
    V::store_n(p, x, left);
  else
    V::store(p, x);
}

// out[j * os][t] = (B^T d)[j] for d[i] = in[i * is][t], t < n. kExactOut: `out` holds
// only n values per row.
template <typename V, bool kExactOut>
void bt_lines(const typename V::T* in, int64_t is, typename V::T* out, int64_t os, int64_t n) {
  using reg = typename V::reg;
  const reg two = V::set1(2), four = V::set1(4), five = V::set1(5);
  for (int64_t t = 0; t < n; t += V::lanes) {
    const reg a0 = V::load(in + t), a1 = V::load(in + is + t), a2 = V::load(in + 2 * is + t);
    const reg a3 = V::load(in + 3 * is + t), a4 = V::load(in + 4 * is + t), a5 = V::load(in + 5 * is + t);
    const reg a4m2 = V::sub(a4, a2);
    store_at<V, kExactOut>(out + t, V::fma(four, a0, V::fnma(five, a2, a4)), n - t);
    store_at<V, kExactOut>(out + os + t, V::fnma(four, V::add(a1, a2), V::add(a3, a4)), n - t);
    store_at<V, kExactOut>(out + 2 * os + t, V::fma(four, V::sub(a1, a2), V::sub(a4, a3)), n - t);
    store_at<V, kExactOut>(out + 3 * os + t, V::fma(two, V::sub(a3, a1), a4m2), n - t);
    store_at<V, kExactOut>(out + 4 * os + t, V::fma(two, V::sub(a1, a3), a4m2), n - t);
    store_at<V, kExactOut>(out + 5 * os + t, V::fma(four, a1, V::fnma(five, a3, a5)), n - t);
  }
}

// Gathers kSize x kSize tiles, the tiles of `images` planes (x's first, the others
// plane_stride apart; H x W each, padding ph, pw; th x tw tiles at steps of 4), kWinoChunk
// at a time: a call per chunk fills D[r][c][t] for its tiles t0 + t, t < n, and zeros up
// to whole vectors. Each plane is first copied into its place in `padded`, a
// (4 th + kSize - 4) x (4 tw + kSize - 4) plane that holds zeros everywhere else (the
// caller zeroes it once for all the planes of a call).
template <typename T, int kSize>
struct TileGather {
  const T* x;
  int64_t plane_stride, H, W, ph, pw, th, tw;
  T* padded;
  int64_t copied = -1;  // the image whose plane `padded` holds

  void chunk(int64_t t0, int64_t n, int64_t whole, T (*D)[kSize][kWinoChunk]) {
    const int64_t Hp = 4 * th + kSize - 4, Wp = 4 * tw + kSize - 4, per_image = th * tw;
    const int64_t r0 = wino_clamp(ph, 0, Hp), r1 = wino_clamp(H + ph, r0, Hp);
    const int64_t c0 = wino_clamp(pw, 0, Wp), c1 = wino_clamp(W + pw, c0, Wp);
    int64_t image = t0 / per_image, ty = t0 % per_image / tw, tx = t0 % tw;  // tile t0 + t
    for (int64_t t = 0; t < n; ++t) {
      if (image != copied) {
        for (int64_t r = r0; r < r1; ++r) {
          const T* src = x + image * plane_stride + (r - ph) * W;
          T* dst = padded + r * Wp;
          for (int64_t c = c0; c < c1; ++c) dst[c] = src[c - pw];
        }
        copied = image;
      }
      const T* src = padded + 4 * ty * Wp + 4 * tx;
      for (int r = 0; r < kSize; ++r)
        for (int c = 0; c < kSize; ++c) D[r][c][t] = src[r * Wp + c];
      next_tile(image, ty, tx, th, tw);
    }
    for (int r = 0; r < kSize; ++r)
      for (int c = 0; c < kSize; ++c) wino_fill(&D[r][c][n], &D[r][c][whole], T(0));
  }
};

// A transform's two passes over the gathered tiles, kWinoChunk at a time: kDown takes
// each tile's kSize x kSize values to 6 x kSize down the columns, kAlong to 6 x 6 along
// the rows, written to the transform domain at `out`.
template <typename V>
using LinesFn = void (*)(const typename V::T*, int64_t, typename V::T*, int64_t, int64_t);

template <typename V, int kSize, LinesFn<V> kDown, LinesFn<V> kAlong>
void gathered_transform(TileGather<typename V::T, kSize> gather, int64_t tiles, typename V::T* out,
                        int64_t stride_xi) {
  using T = typename V::T;
  alignas(64) T D[kSize][kSize][kWinoChunk];  // D[r][c][t]: value (r, c) of tile t0 + t
  alignas(64) T Q[6][kSize][kWinoChunk];      // down the columns: Q[i][c][t]
  for (int64_t t0 = 0; t0 < tiles; t0 += kWinoChunk) {
    const int64_t n = wino_min(kWinoChunk, tiles - t0), whole = whole_vectors<V>(n);
    gather.chunk(t0, n, whole, D);
    for (int c = 0; c < kSize; ++c) kDown(&D[0][c][0], kSize * kWinoChunk, &Q[0][c][0], kSize * kWinoChunk, whole);
    for (int i = 0; i < 6; ++i) kAlong(&Q[i][0][0], kWinoChunk, out + 6 * i * stride_xi + t0, stride_xi, n);
  }
}

// V = B^T d B for the planes' 6 x 6 input tiles d.
template <typename V>
void input_planes(const typename V::T* x, int64_t plane_stride, int64_t images, int64_t H, int64_t W, int64_t ph,
                  int64_t pw, int64_t th, int64_t tw, typename V::T* v, int64_t stride_xi, typename V::T* padded) {
  gathered_transform<V, 6, &bt_lines<V, false>, &bt_lines<V, true>>({x, plane_stride, H, W, ph, pw, th, tw, padded},
                                                                    images * th * tw, v, stride_xi);
}

// out[i * os][t] = (A y)[i] for y[a] = in[a * is][t], t < n: A = (A^T)^T, 6 x 4, the
// gradient's way back through A^T (backward-filter).
template <typename V, bool kExactOut>
void a_lines(const typename V::T* in, int64_t is, typename V::T* out, int64_t os, int64_t n) {
  using reg = typename V::reg;
  const reg two = V::set1(2), four = V::set1(4);
  for (int64_t t = 0; t < n; t += V::lanes) {
    const reg y0 = V::load(in + t), y1 = V::load(in + is + t), y2 = V::load(in + 2 * is + t);
    const reg y3 = V::load(in + 3 * is + t);
    const reg s02 = V::add(y0, y2), s13 = V::add(y1, y3);
    const reg p = V::fma(four, y2, y0), q = V::mul(two, V::fma(four, y3, y1));
    store_at<V, kExactOut>(out + t, y0, n - t);
    store_at<V, kExactOut>(out + os + t, V::add(s02, s13), n - t);
    store_at<V, kExactOut>(out + 2 * os + t, V::sub(s02, s13), n - t);
    store_at<V, kExactOut>(out + 3 * os + t, V::add(p, q), n - t);
    store_at<V, kExactOut>(out + 4 * os + t, V::sub(p, q), n - t);
    store_at<V, kExactOut>(out + 5 * os + t, y3, n - t);
  }
}

// dM[xi][t] = (A dy A^T)[xi] for every 4 x 4 tile dy of `images` Ho x Wo planes of dY (dy
// past the plane's edge is 0): the gradient of M, whose tiles A^T M A the forward
// clipped to the plane.
template <typename V>
void grad_planes(const typename V::T* dy, int64_t plane_stride, int64_t images, int64_t Ho, int64_t Wo, int64_t th,
                 int64_t tw, typename V::T* m, int64_t stride_xi, typename V::T* padded) {
  gathered_transform<V, 4, &a_lines<V, false>, &a_lines<V, true>>({dy, plane_stride, Ho, Wo, 0, 0, th, tw, padded},
                                                                  images * th * tw, m, stride_xi);
}

// out[j * os][f] = (G g)[j] for g[i] = in[i * is][f], f < n.
template <typename V, bool kExactOut>
void g_lines(const typename V::T* in, int64_t is, typename V::T* out, int64_t os, int64_t n) {
  using T = typename V::T;
  using reg = typename V::reg;
  const reg two = V::set1(2), four = V::set1(4), quarter = V::set1(T(0.25));
  const reg sixth = V::set1(T(1) / T(6)), minus_sixth = V::set1(-T(1) / T(6)), twenty_fourth = V::set1(T(1) / T(24));
  for (int64_t f = 0; f < n; f += V::lanes) {
    const reg a0 = V::load(in + f), a1 = V::load(in + is + f), a2 = V::load(in + 2 * is + f);
    const reg a02 = V::add(a0, a2), a0p4a2 = V::fma(four, a2, a0);
    store_at<V, kExactOut>(out + f, V::mul(a0, quarter), n - f);
    store_at<V, kExactOut>(out + os + f, V::mul(V::add(a02, a1), minus_sixth), n - f);
    store_at<V, kExactOut>(out + 2 * os + f, V::mul(V::sub(a1, a02), sixth), n - f);
    store_at<V, kExactOut>(out + 3 * os + f, V::mul(V::fma(two, a1, a0p4a2), twenty_fourth), n - f);
    store_at<V, kExactOut>(out + 4 * os + f, V::mul(V::fnma(two, a1, a0p4a2), twenty_fourth), n - f);
    store_at<V, kExactOut>(out + 5 * os + f, a2, n - f);
  }
}

template <typename V>
void filter_block(const typename V::T* w, int64_t n, typename V::T* u, int64_t stride_xi) {
  using T = typename V::T;
  alignas(64) T g[9][kWinoChunk];      // g[3r + q][f]: tap (r, q) of filter f
  alignas(64) T gc[6][3][kWinoChunk];  // G down the columns: gc[i][q][f]
  const int64_t whole = whole_vectors<V>(n);
  for (int64_t f = 0; f < n; ++f)
    for (int e = 0; e < 9; ++e) g[e][f] = w[f * 9 + e];
  for (int e = 0; e < 9; ++e) wino_fill(&g[e][n], &g[e][whole], T(0));
  for (int q = 0; q < 3; ++q) g_lines<V, false>(&g[q][0], 3 * kWinoChunk, &gc[0][q][0], 3 * kWinoChunk, whole);
  for (int i = 0; i < 6; ++i) g_lines<V, true>(&gc[i][0][0], kWinoChunk, u + 6 * i * stride_xi, stride_xi, n);
}

// out[q * os][f] = (G^T u)[q] for u[i] = in[i * is][f], f < n: the gradient's way back
// through G (backward-filter).
template <typename V, bool kExactIn>
void gt_lines(const typename V::T* in, int64_t is, typename V::T* out, int64_t os, int64_t n) {
  using T = typename V::T;
  using reg = typename V::reg;
  const reg quarter = V::set1(T(0.25)), sixth = V::set1(T(1) / T(6)), twelfth = V::set1(T(1) / T(12));
  const reg twenty_fourth = V::set1(T(1) / T(24));
  for (int64_t f = 0; f < n; f += V::lanes) {
    const reg u0 = load_at<V, kExactIn>(in + f, n - f), u1 = load_at<V, kExactIn>(in + is + f, n - f);
    const reg u2 = load_at<V, kExactIn>(in + 2 * is + f, n - f), u3 = load_at<V, kExactIn>(in + 3 * is + f, n - f);
    const reg u4 = load_at<V, kExactIn>(in + 4 * is + f, n - f), u5 = load_at<V, kExactIn>(in + 5 * is + f, n - f);
    const reg s12 = V::add(u1, u2), s34 = V::add(u3, u4);
    V::store(out + f, V::fma(u0, quarter, V::fma(s34, twenty_fourth, V::mul(s12, V::set1(-T(1) / T(6))))));
    V::store(out + os + f, V::fma(V::sub(u2, u1), sixth, V::mul(V::sub(u3, u4), twelfth)));
    V::store(out + 2 * os + f, V::fma(V::sub(s34, s12), sixth, u5));
  }
}

// dw[f][r][q] = (G^T dU G)[r][q] for the n <= kWinogradBlock filters f from u, the first
// one's place in matrix 0 of dU (the gradient of U = G g G^T).
template <typename V>
void filter_grad_block(const typename V::T* u, int64_t stride_xi, int64_t n, typename V::T* dw) {
  using T = typename V::T;
  alignas(64) T R[3][6][kWinoChunk];  // G^T down the columns: R[r][j][f]
  alignas(64) T O[3][3][kWinoChunk];  // then along the rows: tap (r, q) of filter f
  const int64_t whole = whole_vectors<V>(n);
  for (int j = 0; j < 6; ++j) gt_lines<V, true>(u + j * stride_xi, 6 * stride_xi, &R[0][j][0], 6 * kWinoChunk, n);
  for (int r = 0; r < 3; ++r) gt_lines<V, false>(&R[r][0][0], kWinoChunk, &O[r][0][0], kWinoChunk, whole);
  for (int64_t f = 0; f < n; ++f)
    for (int r = 0; r < 3; ++r)
      for (int q = 0; q < 3; ++q) dw[f * 9 + 3 * r + q] = O[r][q][f];
}

// out[a * os][t] = (A^T m)[a] for m[i] = in[i * is][t], t < n. kExactIn: `in` holds only
// n values per row.
template <typename V, bool kExactIn>
void at_lines(const typename V::T* in, int64_t is, typename V::T* out, int64_t os, int64_t n) {
  using reg = typename V::reg;
  const reg two = V::set1(2), four = V::set1(4), eight = V::set1(8);
  for (int64_t t = 0; t < n; t += V::lanes) {
    const reg m1 = load_at<V, kExactIn>(in + is + t, n - t), m2 = load_at<V, kExactIn>(in + 2 * is + t, n - t);
    const reg m3 = load_at<V, kExactIn>(in + 3 * is + t, n - t), m4 = load_at<V, kExactIn>(in + 4 * is + t, n - t);
    const reg s12 = V::add(m1, m2), d12 = V::sub(m1, m2), s34 = V::add(m3, m4), d34 = V::sub(m3, m4);
    V::store(out + t, V::add(V::add(load_at<V, kExactIn>(in + t, n - t), s12), s34));
    V::store(out + os + t, V::fma(two, d34, d12));
    V::store(out + 2 * os + t, V::fma(four, s34, s12));
    V::store(out + 3 * os + t, V::add(V::fma(eight, d34, d12), load_at<V, kExactIn>(in + 5 * is + t, n - t)));
  }
}

template <typename V>
void output_planes(const typename V::T* m, int64_t stride_xi, int64_t images, int64_t th, int64_t tw,
                   typename V::T* y, int64_t plane_stride, int64_t Ho, int64_t Wo) {
  using T = typename V::T;
  alignas(64) T R[4][6][kWinoChunk];  // A^T down the columns: R[a][j][t]
  alignas(64) T O[4][4][kWinoChunk];  // then along the rows: output (a, b) of tile t0 + t
  const int64_t per_image = th * tw, tiles = images * per_image;
  for (int64_t t0 = 0; t0 < tiles; t0 += kWinoChunk) {
    const int64_t n = wino_min(kWinoChunk, tiles - t0), whole = whole_vectors<V>(n);
    for (int j = 0; j < 6; ++j)
      at_lines<V, true>(m + j * stride_xi + t0, 6 * stride_xi, &R[0][j][0], 6 * kWinoChunk, n);
    for (int a = 0; a < 4; ++a) at_lines<V, false>(&R[a][0][0], kWinoChunk, &O[a][0][0], kWinoChunk, whole);
    int64_t image = t0 / per_image, ty = t0 % per_image / tw, tx = t0 % tw;  // tile t0 + t
    for (int64_t t = 0; t < n; ++t, next_tile(image, ty, tx, th, tw)) {
      const int64_t rows = wino_min(4, Ho - 4 * ty), cols = wino_min(4, Wo - 4 * tx);
      T* dst = y + image * plane_stride + 4 * ty * Wo + 4 * tx;
      if (rows == 4 && cols == 4) {
        for (int a = 0; a < 4; ++a)
          for (int b = 0; b < 4; ++b) dst[a * Wo + b] = O[a][b][t];
      } else {
        for (int64_t a = 0; a < rows; ++a)
          for (int64_t b = 0; b < cols; ++b) dst[a * Wo + b] = O[a][b][t];
      }
    }
  }
}

template <typename V>
WinogradKernels<typename V::T> make_winograd_kernels() {
  return {&input_planes<V>, &filter_block<V>, &output_planes<V>, &grad_planes<V>, &filter_grad_block<V>};
}

}  // namespace
}  // namespace minifw
