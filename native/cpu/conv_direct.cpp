// Direct convolution at stride 1: no lowered matrix and no packing of the input.
//
// The input is copied once into a zero-padded layout where each channel is one flat
// array: images stacked, each Hq rows of Wq values, the padding shared between
// neighbours (a row's right padding is the next row's left padding, an image's bottom
// padding the next image's top). In that layout the input value that output position j
// reads through tap (r, s) is at j + r*dh*Wq + s*dw, where j = (n*Hq + oh)*Wq + ow is
// the output's own flat index in the same layout: every tap of every channel is the same
// array shifted. So
//
//   Y_g[k, j] = sum_{c, r, s} W_g[k, c, r, s] * Xq_c[j + r*dh*Wq + s*dw]
//
// is a GEMM whose B rows are shifted views of Xq, read where they are, with nothing
// packed but the weights. Its register tiles (conv_direct_impl.h) take one of two shapes:
//
// - Row tiles, where the output channels per group are whole vectors (and K is at least
//   32, rows_path below): up to mr_max
//   consecutive outputs of one output row (2 mr_max for a block of one vector) by two
//   vectors of output channels. Each step of K broadcasts the run's mr input values of
//   one (channel, tap) and loads two vectors of packed weights; the sums are written out
//   transposed. Only outputs are computed.
// - Tiles along the layout otherwise: mr output channels by nr consecutive j, which load
//   two vectors of Xq per step of K and broadcast mr packed weights, like the GEMM
//   micro-kernel. The price is the positions j that are not outputs (ow >= Wo or
//   oh >= Ho): they are computed and dropped, a fraction 1 - Ho*Wo / (Hq*Wq) of the work
//   (27 x 27 outputs with pad 2: 13%).
//
// Backward-data at stride 1 is the same computation on dY: dX = conv(dY, W flipped in
// both taps and transposed in its channels) with padding (R-1)*d - p, which crops dY
// where that is negative.
//
// At a stride s > 1 (forward and backward-filter) each channel becomes s_h * s_w arrays
// (fewer where the stride passes the padded image), one per phase of the stride (space to
// depth): phase (b_h, b_w)'s row u, column v holds
// the padded input at (s_h*u + b_h, s_w*v + b_w), each image ceil((H + 2p) / s) rows of
// ceil((W + 2p) / s) values, nothing shared. Output (i, x) reads tap (r, q) at (s_h*i +
// r*d_h, s_w*x + q*d_w): in phase ((r*d_h) mod s_h, (q*d_w) mod s_w), shifted by
// (r*d_h) div s_h rows and (q*d_w) div s_w columns. So a strided convolution is again a
// GEMM over shifted arrays, each tap read where it lies (AlexNet conv1, 11 x 11 at stride
// 4: 3 x 3 shifts of 16 phases; the 121 taps, none of them zero, of each channel).
//
// Along the layout, a tile's B values span its own nr columns plus the taps' reach, for
// each channel of the group; tiles go in blocks whose B data stays within a few tens of
// KiB, and every row tile of the output channels runs over a block before the next
// block, so those values are read from the L1 for each row tile and each tap. Row tiles
// go by channel block, each over runs of output rows, so a block's weights stay in the L2.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "conv.h"
#include "conv_direct.h"
#include "conv_direct_impl.h"
#include "parallel.h"
#include "simd_generic.h"
#include "split_work.h"

namespace minifw {

MINIFW_ISA_VARIANT(DirectKernels<float>, generic, (make_direct_kernels<Vec16<float>, 6>()))
MINIFW_ISA_VARIANT(DirectKernels<double>, generic, (make_direct_kernels<Vec16<double>, 6>()))

namespace {

// The workspace's arrays start on a cache line (the caller's buffer need not), so that
// the rows of dY transposed, read by the backward-filter's tiles, are loaded whole.
constexpr int64_t kAlign = 64;
template <typename T>
T* cache_line_start(T* ws) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(ws);
  return reinterpret_cast<T*>((a + kAlign - 1) / kAlign * kAlign);
}

// Along one axis at a stride > 1: one array per phase of the stride, each image whole
// (pad >= 0 here: a forward's padding).
PaddedAxis phase_axis(int64_t src, int64_t pad, int64_t taps, int64_t dil, int64_t stride) {
  PaddedAxis a;
  const int64_t extent = src + 2 * pad;
  a.pad = pad;
  a.lower = pad;
  a.upper = src + pad;
  a.out = (extent - (taps - 1) * dil - 1) / stride + 1;
  a.q = (extent + stride - 1) / stride;
  return a;
}

// One direct convolution: `cin` channels per group of a source of N images (Hs x Ws)
// into `m` channels per group of the destination (h.out rows x w.out columns), at stride
// sh x sw: each channel then nh x nw phase arrays of L values, the phases that can hold
// data, min(stride, padded extent) per axis (a phase past the extent would hold only
// zeros, and no tap reads it: a tap's offset r*dh is within the extent).
template <typename T>
struct DirectPlan {
  int64_t N, groups, cin, m, Hs, Ws, R, S, dh, dw, sh, sw;
  PaddedAxis h, w;
  int64_t nr, J, tiles, L, kdim;
  int64_t nh = 1, nw = 1;

  int64_t phases() const { return nh * nw; }
  int64_t xq_values() const { return groups * cin * phases() * L; }
  int64_t a_values() const { return groups * m * kdim; }
  // Where tap (r, q) of a channel reads, from the output's own index j, past the start of
  // the channel's first phase array: its phase's array, shifted.
  int64_t tap_offset(int64_t r, int64_t q) const {
    const int64_t rh = r * dh, cw = q * dw;
    return ((rh % sh) * nw + cw % sw) * L + (rh / sh) * w.q + cw / sw;
  }
  // The furthest a tap reads past j within its phase.
  int64_t reach() const { return ((R - 1) * dh / sh) * w.q + (S - 1) * dw / sw; }
};

template <typename T>
DirectPlan<T> make_plan(int64_t N, int64_t groups, int64_t cin, int64_t m, int64_t Hs, int64_t Ws,
                        int64_t pad_h, int64_t pad_w, int64_t sh, int64_t sw, const ConvShape& s, int nr) {
  const bool strided = sh > 1 || sw > 1;
  DirectPlan<T> p{N, groups, cin, m, Hs, Ws, s.R, s.S, s.dh, s.dw, sh, sw,
                  strided ? phase_axis(Hs, pad_h, s.R, s.dh, sh) : padded_axis(Hs, pad_h, s.R, s.dh),
                  strided ? phase_axis(Ws, pad_w, s.S, s.dw, sw) : padded_axis(Ws, pad_w, s.S, s.dw),
                  nr, 0, 0, 0, cin * s.R * s.S};
  if (strided) {
    p.nh = std::min(sh, Hs + 2 * pad_h);
    p.nw = std::min(sw, Ws + 2 * pad_w);
  }
  p.J = N * p.h.q * p.w.q;
  p.tiles = (p.J + nr - 1) / nr;
  // Every column of every tile, waste included, reads within its own phase's array.
  p.L = round_up(p.tiles * nr + p.reach(), 16);
  return p;
}

template <typename T>
DirectPlan<T> forward_plan(const ConvShape& s, int nr) {
  return make_plan<T>(s.N, s.groups, s.Cg(), s.Kg(), s.H, s.W, s.ph, s.pw, s.sh, s.sw, s, nr);
}

template <typename T>
DirectPlan<T> data_plan(const ConvShape& s, int nr) {  // stride 1 only
  return make_plan<T>(s.N, s.groups, s.Kg(), s.Cg(), s.Ho, s.Wo, (s.R - 1) * s.dh - s.ph,
                      (s.S - 1) * s.dw - s.pw, 1, 1, s, nr);
}

// The source positions [first, end) along one axis of a phase's array: those whose
// padded position stride * u + phase holds data (src values from pad on).
inline void phase_range(const PaddedAxis& a, int64_t src, int64_t stride, int64_t phase, int64_t& first,
                        int64_t& end) {
  const int64_t at0 = phase - a.pad;  // the source index of u = 0
  first = at0 >= 0 ? 0 : (-at0 + stride - 1) / stride;
  const int64_t last = src - 1 - at0;  // u reaches at most last / stride
  end = last < 0 ? 0 : std::min(a.q, last / stride + 1);
  if (end < first) end = first;
}

// The phase arrays of every channel of the source at a stride > 1: per channel and row
// phase b_h, the sw arrays of its column phases together, so that each source row is read
// once (while in the L1) for all of them.
template <typename T>
void fill_phases(const DirectPlan<T>& p, const T* src, T* xq, int nthreads) {
  const int64_t channels = p.groups * p.cin, HWs = p.Hs * p.Ws, phases = p.phases();
  for_each_item(channels * p.nh, p.nw * p.L, nthreads, [&](int64_t item) {
    const int64_t c = item / p.nh, bh = item % p.nh;
    T* first = xq + (c * phases + bh * p.nw) * p.L;  // phase (bh, 0); (bh, bw) is bw * L on
    std::memset(first, 0, sizeof(T) * p.nw * p.L);
    int64_t u0, u1;
    phase_range(p.h, p.Hs, p.sh, bh, u0, u1);
    for (int64_t n = 0; n < p.N; ++n) {
      const T* image = src + (n * channels + c) * HWs;
      for (int64_t u = u0; u < u1; ++u) {
        const T* row = image + (p.sh * u + bh - p.h.pad) * p.Ws;
        for (int64_t bw = 0; bw < p.nw; ++bw) {
          int64_t v0, v1;
          phase_range(p.w, p.Ws, p.sw, bw, v0, v1);
          if (v1 <= v0) continue;
          // from column v0 on, so that no pointer is formed outside the row
          const T* from = row + (p.sw * v0 + bw - p.w.pad);
          T* to = first + bw * p.L + (n * p.h.q + u) * p.w.q + v0;
          for (int64_t v = 0; v < v1 - v0; ++v) to[v] = from[p.sw * v];
        }
      }
    }
  });
}

// Xq_c for every channel c of the source (N x groups*cin x Hs x Ws).
template <typename T>
void fill_padded(const DirectPlan<T>& p, const T* src, T* xq, int nthreads) {
  if (p.phases() > 1) return fill_phases(p, src, xq, nthreads);
  const int64_t channels = p.groups * p.cin, HWs = p.Hs * p.Ws;
  const int64_t run = p.w.upper - p.w.lower, col0 = p.w.lower - p.w.pad;
  for_each_item(channels, p.L, nthreads, [&](int64_t c) {
    T* dst = xq + c * p.L;
    std::memset(dst, 0, sizeof(T) * p.L);
    for (int64_t n = 0; n < p.N; ++n) {
      const T* image = src + (n * channels + c) * HWs;
      for (int64_t d = p.h.lower; d < p.h.upper; ++d)
        std::memcpy(dst + (n * p.h.q + d) * p.w.q + p.w.lower, image + (d - p.h.pad) * p.Ws + col0,
                    sizeof(T) * run);
    }
  });
}

// The weights as tiles' panels, per group and part [row0, row0 + mr) of the output
// channels (the row tiles along the layout, or the channel blocks of the row tiles):
// a[k * mr + i] = weight(g, row0 + i, k) for k = (c, r, s) in the order of koff.
template <typename T, typename F>
void pack_weights(const DirectPlan<T>& p, const std::vector<int64_t>& parts, T* a, F&& weight) {
  for (int64_t g = 0; g < p.groups; ++g)
    for (size_t t = 0; t + 1 < parts.size(); ++t) {
      const int64_t row0 = parts[t], mr = parts[t + 1] - row0;
      T* panel = a + (g * p.m + row0) * p.kdim;
      for (int64_t k = 0; k < p.kdim; ++k)
        for (int64_t i = 0; i < mr; ++i) panel[k * mr + i] = weight(g, row0 + i, k);
    }
}

// [0, m) in parts of at most mr_max, as even as possible: boundaries 0 = b0 < b1 < ... = m.
std::vector<int64_t> split_rows(int64_t m, int mr_max) {
  const int64_t n = (m + mr_max - 1) / mr_max;
  std::vector<int64_t> bounds(n + 1);
  for (int64_t t = 0; t <= n; ++t) bounds[t] = t * m / n;
  return bounds;
}

template <typename T>
void run_direct(const DirectKernels<T>& ks, const DirectPlan<T>& p, const T* xq, const T* a,
                const std::vector<int64_t>& row_tiles,
                const T* bias, T* dst, int nthreads) {
  const int64_t nr = p.nr, Ho = p.h.out, Wo = p.w.out, Hq = p.h.q, Wq = p.w.q;
  const int64_t channels_out = p.groups * p.m;
  std::vector<int64_t> koff(p.kdim);
  for (int64_t c = 0, k = 0; c < p.cin; ++c)
    for (int64_t r = 0; r < p.R; ++r)
      for (int64_t q = 0; q < p.S; ++q) koff[k++] = c * p.phases() * p.L + p.tap_offset(r, q);
  // Each tile's runs of output positions (one output row at most each), computed once
  // for every row tile and group: (column in the tile, length, position in an output
  // channel's images). A tile without any lies wholly in padding rows and is skipped.
  struct Run {
    int64_t col, len, at;
  };
  std::vector<Run> runs;
  std::vector<int64_t> first(p.tiles + 1, 0);
  for (int64_t n = 0; n < p.N; ++n)
    for (int64_t y = 0; y < Ho; ++y)
      for (int64_t j = (n * Hq + y) * Wq, x = 0; x < Wo;) {
        const int64_t t = (j + x) / nr, len = std::min(Wo - x, (t + 1) * nr - (j + x));
        runs.push_back({j + x - t * nr, len, n * channels_out * Ho * Wo + y * Wo + x});
        ++first[t + 1];
        x += len;
      }
  for (int64_t t = 0; t < p.tiles; ++t) first[t + 1] += first[t];
  // Tiles per block: the block's B values (cin channels, each of its phases, x its
  // columns plus the taps' reach) within 24 KiB where they can be, so they stay in the
  // L1 across row tiles.
  const int64_t fit = (24 * 1024 / int64_t(sizeof(T)) / (p.cin * p.phases()) - p.reach()) / nr;
  const int64_t block = std::clamp<int64_t>(fit, 1, 16);
  const int64_t blocks = (p.tiles + block - 1) / block;
  const int threads = static_cast<int>(std::min<int64_t>(std::max(nthreads, 1), blocks));
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (int64_t b = 0; b < blocks; ++b) {
    alignas(64) T c[DirectKernels<T>::kMaxRows * DirectKernels<T>::kMaxCols];
    const int64_t t0 = b * block, t1 = std::min(p.tiles, t0 + block);
    for (int64_t g = 0; g < p.groups; ++g) {
      const T* xg = xq + g * p.cin * p.phases() * p.L;
      for (size_t rt = 0; rt + 1 < row_tiles.size(); ++rt) {
        const int64_t row0 = row_tiles[rt], mr = row_tiles[rt + 1] - row0;
        const T* panel = a + (g * p.m + row0) * p.kdim;
        T* out = dst + (g * p.m + row0) * Ho * Wo;
        for (int64_t t = t0; t < t1; ++t) {
          if (first[t] == first[t + 1]) continue;
          ks.tile[mr](p.kdim, panel, xg + t * nr, koff.data(), c);
          for (int64_t u = first[t]; u < first[t + 1]; ++u) {
            const Run& run = runs[u];
            for (int64_t i = 0; i < mr; ++i) {
              const T* from = c + i * nr + run.col;
              const T b = bias ? bias[g * p.m + row0 + i] : T(0);
              T* to = out + i * Ho * Wo + run.at;
              for (int64_t v = 0; v < run.len; ++v) to[v] = from[v] + b;
            }
          }
        }
      }
    }
  }
}

// The row tiles' path (conv_direct.h's DirectRowTileFn): output channels along the
// vectors, positions along one output row, so only outputs are computed. Blocks of
// output channels: two vectors each, the last three where m is an odd number (from 3)
// of vectors, one where m is one vector.
struct ChannelBlocks {
  int64_t lanes, vectors;  // of the ISA's vector; in m
  int64_t count() const { return vectors == 1 ? 1 : vectors / 2; }
  int64_t first(int64_t b) const { return 2 * b * lanes; }
  int64_t size(int64_t b) const { return (b + 1 == count() ? vectors - 2 * b : 2) * lanes; }
  std::vector<int64_t> bounds() const {  // first(0) < first(1) < ... < m
    std::vector<int64_t> b(count() + 1, vectors * lanes);
    for (int64_t i = 0; i < count(); ++i) b[i] = first(i);
    return b;
  }
};

// The row tiles take whole vectors of output channels, and write their sums out
// transposed, which costs as much as a few dozen steps of K: they run where the output
// channels per group are a multiple of the vector and K is at least 32 (below, AlexNetSmall
// conv1's 25 taps on one channel ran faster on the tiles along the positions under AVX2).
// minifw/ops/conv.py's _direct_rows holds the same rule.
template <typename T>
bool rows_path(const DirectPlan<T>& p) {
  return p.m % (p.nr / 2) == 0 && p.kdim >= 32;
}

template <typename T>
void run_direct_rows(const DirectKernels<T>& ks, const DirectPlan<T>& p, const T* xq, const T* a,
                     const ChannelBlocks& cb, const T* bias, T* dst, int nthreads) {
  const int64_t Ho = p.h.out, Wo = p.w.out, Hq = p.h.q, Wq = p.w.q, plane = Ho * Wo;
  const int64_t channels_out = p.groups * p.m;
  std::vector<int64_t> koff(p.kdim);
  for (int64_t c = 0, k = 0; c < p.cin; ++c)
    for (int64_t r = 0; r < p.R; ++r)
      for (int64_t q = 0; q < p.S; ++q) koff[k++] = c * p.phases() * p.L + p.tap_offset(r, q);
  // The positions of an output row in tiles of at most 2 mr_max / nv positions for nv
  // vectors of channels (the same accumulators; three vectors a few less, conv_direct_impl.h).
  const std::vector<int64_t> tiles_of[4] = {{}, split_rows(Wo, 2 * ks.mr_max), split_rows(Wo, ks.mr_max),
                                            split_rows(Wo, (2 * ks.mr_max - 2) / 3)};
  const DirectRowTileFn<T>* table_of[4] = {nullptr, ks.row1, ks.row2, ks.row3};
  // Work items: a channel block of a group over a run of output rows (all images' rows
  // in order), the runs innermost, so that a thread's items share the block's weights
  // while they are in its L2 (kdim x cols values: 288 KiB for AlexNet conv3 in float).
  const int64_t rows = p.N * Ho, run = std::clamp<int64_t>(rows / 16, 1, 16), runs = (rows + run - 1) / run;
  const int64_t items = p.groups * cb.count() * runs;
  const int threads = static_cast<int>(std::min<int64_t>(std::max(nthreads, 1), items));
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (int64_t item = 0; item < items; ++item) {
    const int64_t g = item / (cb.count() * runs), b = item / runs % cb.count(), r0 = item % runs * run;
    const int64_t ch0 = g * p.m + cb.first(b), nv = cb.size(b) / cb.lanes;
    const T* panel = a + ch0 * p.kdim;
    const T* bb = bias ? bias + ch0 : nullptr;
    const std::vector<int64_t>& tiles = tiles_of[nv];
    const DirectRowTileFn<T>* table = table_of[nv];
    const T* xg = xq + g * p.cin * p.phases() * p.L;
    for (int64_t r = r0; r < std::min(rows, r0 + run); ++r) {
      const int64_t n = r / Ho, y = r % Ho;
      const T* row = xg + (n * Hq + y) * Wq;
      T* out = dst + (n * channels_out + ch0) * plane + y * Wo;
      for (size_t t = 0; t + 1 < tiles.size(); ++t) {
        const int64_t x0 = tiles[t], mr = tiles[t + 1] - x0;
        table[mr](p.kdim, row + x0, koff.data(), panel, bb, out + x0, plane);
      }
    }
  }
}

// The backward-filter's positions go in chunks of whole output rows, about this many
// positions each (direct_backward_filter, below).
constexpr int64_t kFilterChunk = 2048;

// Its buffers: per thread, one chunk of dY transposed (nr output channels for each of
// the chunk's positions), and the chunks' sums (per group, chunk and block of nr output
// channels, CgRS pairs by nr channels).
template <typename T>
struct FilterLayout {
  int64_t groups, kb, rows_per_chunk, chunks, CgRS, chunk_positions;
  int64_t items() const { return groups * chunks * kb; }  // (group, chunk, block of nr channels)
  // the threads that run: no more than the items
  int threads(int nthreads) const { return static_cast<int>(std::min<int64_t>(std::max(nthreads, 1), items())); }
  int64_t dyt_values(int nthreads, int nr) const { return threads(nthreads) * round_up(chunk_positions * nr, 16); }
  int64_t partial_values(int64_t groups, int nr) const { return groups * chunks * kb * CgRS * nr; }
};

template <typename T>
FilterLayout<T> filter_layout(const ConvShape& s, const DirectPlan<T>& p, int nr) {
  const int64_t rows = s.N * s.Ho, per = std::max<int64_t>(1, kFilterChunk / std::max<int64_t>(1, s.Wo));
  return {s.groups, (s.Kg() + nr - 1) / nr, per, (rows + per - 1) / per, p.kdim, std::min(per, rows) * s.Wo};
}

}  // namespace

template <typename T>
ConvWorkspace direct_workspace(ConvDir dir, const ConvShape& s, int nthreads) {
  const DirectKernels<T>& ks = select_isa_variant<DirectKernels<T>>();
  const DirectPlan<T> p = dir == ConvDir::backward_data ? data_plan<T>(s, ks.nr) : forward_plan<T>(s, ks.nr);
  int64_t values = p.xq_values();  // the padded source
  if (dir == ConvDir::backward_filter) {
    // dY transposed into the output positions' layout, and each chunk's sums
    const FilterLayout<T> f = filter_layout(s, p, ks.nr);
    values += f.dyt_values(nthreads, ks.nr) + f.partial_values(s.groups, ks.nr);
  } else {
    values += round_up(p.a_values(), 16);  // the weights' panels
  }
  return {values * int64_t(sizeof(T)) + kAlign, 0};  // and room to start on a cache line
}

template <typename T>
void direct_forward(const ConvShape& s, const T* x, const T* w, const T* bias, T* y, T* ws, int nthreads) {
  const DirectKernels<T>& ks = select_isa_variant<DirectKernels<T>>();
  const DirectPlan<T> p = forward_plan<T>(s, ks.nr);
  T* xq = cache_line_start(ws);
  T* a = xq + p.xq_values();
  const int64_t CgRS = p.kdim;
  auto weight = [&](int64_t g, int64_t k, int64_t ck) { return w[(g * p.m + k) * CgRS + ck]; };
  if (rows_path(p)) {
    const ChannelBlocks cb{p.nr / 2, p.m / (p.nr / 2)};
    pack_weights(p, cb.bounds(), a, weight);
    fill_padded(p, x, xq, nthreads);
    return run_direct_rows(ks, p, xq, a, cb, bias, y, nthreads);
  }
  const std::vector<int64_t> row_tiles = split_rows(p.m, ks.mr_max);
  pack_weights(p, row_tiles, a, weight);
  fill_padded(p, x, xq, nthreads);
  run_direct(ks, p, xq, a, row_tiles, bias, y, nthreads);  // the bias added as the outputs are written
}

template <typename T>
void direct_backward_data(const ConvShape& s, const T* dy, const T* w, T* dx, T* ws, int nthreads) {
  const DirectKernels<T>& ks = select_isa_variant<DirectKernels<T>>();
  const DirectPlan<T> p = data_plan<T>(s, ks.nr);
  T* xq = cache_line_start(ws);
  T* a = xq + p.xq_values();
  const int64_t RS = s.R * s.S, Cg = s.Cg(), Kg = s.Kg();
  // Row c of group g, step k = (kout, r, s): w[g*Kg + kout, c, R-1-r, S-1-s].
  auto weight = [&](int64_t g, int64_t c, int64_t k) {
    const int64_t kout = k / RS, r = (k % RS) / s.S, q = k % s.S;
    return w[((g * Kg + kout) * Cg + c) * RS + (s.R - 1 - r) * s.S + (s.S - 1 - q)];
  };
  if (rows_path(p)) {
    const ChannelBlocks cb{p.nr / 2, p.m / (p.nr / 2)};
    pack_weights(p, cb.bounds(), a, weight);
    fill_padded(p, dy, xq, nthreads);
    return run_direct_rows(ks, p, xq, a, cb, static_cast<const T*>(nullptr), dx, nthreads);
  }
  const std::vector<int64_t> row_tiles = split_rows(p.m, ks.mr_max);
  pack_weights(p, row_tiles, a, weight);
  fill_padded(p, dy, xq, nthreads);
  run_direct(ks, p, xq, a, row_tiles, static_cast<const T*>(nullptr), dx, nthreads);
}

// Backward-filter: dW_g[k, (c, r, s)] = sum_j dY_k[j] * Xq_c[j + r*dh*Wq + s*dw] over the
// output positions j of the layout. A tile (conv_direct_impl.h) holds mr (channel, tap)
// pairs by nr output channels in registers while it runs along output rows: each step
// loads one row of dY transposed (dYt: nr output channels for each output position) and
// broadcasts one value of each pair's shifted input. The positions of the layout's
// padding are skipped. Positions go in chunks of whole output rows, about kFilterChunk
// positions: a thread transposes a chunk's dY for one block of output channels into its
// own dYt (256 KiB in float), which stays in the L2 while every pair passes. Each chunk's
// sums are kept apart and added in chunk order, so every value is summed in one order
// whatever the thread count.
template <typename T>
void direct_backward_filter(const ConvShape& s, const T* x, const T* dy, T* dw, T* ws, int nthreads) {
  const DirectKernels<T>& ks = select_isa_variant<DirectKernels<T>>();
  const DirectPlan<T> p = forward_plan<T>(s, ks.nr);
  const FilterLayout<T> f = filter_layout(s, p, ks.nr);
  const int64_t nr = ks.nr, RS = s.R * s.S, Cg = s.Cg(), Kg = s.Kg(), CgRS = f.CgRS;
  const int64_t Hq = p.h.q, Wq = p.w.q, P = s.P(), KB = f.kb, rows = s.N * s.Ho;
  T* xq = cache_line_start(ws);
  T* dyts = xq + p.xq_values();
  T* partials = dyts + f.dyt_values(nthreads, ks.nr);
  fill_padded(p, x, xq, nthreads);
  std::vector<int64_t> toff(RS);
  for (int64_t r = 0; r < s.R; ++r)
    for (int64_t q = 0; q < s.S; ++q) toff[r * s.S + q] = p.tap_offset(r, q);
  std::vector<int64_t> seg(rows);  // each output row's place in the layout
  for (int64_t r = 0; r < rows; ++r) seg[r] = (r / s.Ho * Hq + r % s.Ho) * Wq;
  const std::vector<int64_t> pair_tiles = split_rows(CgRS, ks.mr_max);
  const int64_t items = f.items();
  const int threads = f.threads(nthreads);  // each its own dYt
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1)
  for (int64_t item = 0; item < items; ++item) {
    const int64_t g = item / (f.chunks * KB), chunk = (item / KB) % f.chunks, kb = item % KB;
    const int64_t r0 = chunk * f.rows_per_chunk, n = std::min(f.rows_per_chunk, rows - r0);
    const int64_t k0 = kb * nr, width = std::min(nr, Kg - k0);
    // dYt[(r - r0)*Wo + x][kk] = dY[image, g*Kg + k0 + kk, y, x] for output row r = (image, y)
    T* bt = dyts + omp_get_thread_num() * round_up(f.chunk_positions * nr, 16);
    if (width < nr) std::memset(bt, 0, sizeof(T) * n * s.Wo * nr);
    for (int64_t r = r0; r < r0 + n; ++r) {
      const T* src = dy + ((r / s.Ho) * s.K + g * Kg + k0) * P + (r % s.Ho) * s.Wo;
      T* row = bt + (r - r0) * s.Wo * nr;
      for (int64_t kk = 0; kk < width; ++kk)
        for (int64_t x = 0; x < s.Wo; ++x) row[x * nr + kk] = src[kk * P + x];
    }
    T* part = partials + ((g * f.chunks + chunk) * KB + kb) * CgRS * nr;
    const T* pair_rows[DirectKernels<T>::kMaxRows];
    for (size_t pt = 0; pt + 1 < pair_tiles.size(); ++pt) {
      const int64_t pc0 = pair_tiles[pt], mr = pair_tiles[pt + 1] - pc0;
      for (int64_t i = 0; i < mr; ++i) {
        const int64_t c = (pc0 + i) / RS, tap = (pc0 + i) % RS;
        pair_rows[i] = xq + (g * Cg + c) * p.phases() * p.L + toff[tap];
      }
      ks.filter[mr](n, s.Wo, seg.data() + r0, pair_rows, bt, part + pc0 * nr);
    }
  }
  // dW[g*Kg + kb*nr + kk, pc]: the chunks' sums added in chunk order into the first
  // chunk's, then transposed out.
  for_each_item(s.groups * KB, f.chunks * CgRS * nr, nthreads, [&](int64_t gk) {
    const int64_t g = gk / KB, kb = gk % KB, k0 = kb * nr, width = std::min(nr, Kg - k0);
    T* sum = partials + (g * f.chunks * KB + kb) * CgRS * nr;
    for (int64_t chunk = 1; chunk < f.chunks; ++chunk) {
      const T* part = partials + ((g * f.chunks + chunk) * KB + kb) * CgRS * nr;
      for (int64_t i = 0; i < CgRS * nr; ++i) sum[i] += part[i];
    }
    for (int64_t kk = 0; kk < width; ++kk) {
      T* out = dw + (g * Kg + k0 + kk) * CgRS;
      for (int64_t pc = 0; pc < CgRS; ++pc) out[pc] = sum[pc * nr + kk];
    }
  });
}

#define MINIFW_INSTANTIATE_DIRECT(T)                                                                \
  template ConvWorkspace direct_workspace<T>(ConvDir, const ConvShape&, int);                      \
  template void direct_forward<T>(const ConvShape&, const T*, const T*, const T*, T*, T*, int);    \
  template void direct_backward_data<T>(const ConvShape&, const T*, const T*, T*, T*, int);        \
  template void direct_backward_filter<T>(const ConvShape&, const T*, const T*, T*, T*, int);
MINIFW_INSTANTIATE_DIRECT(float)
MINIFW_INSTANTIATE_DIRECT(double)
}  // namespace minifw
