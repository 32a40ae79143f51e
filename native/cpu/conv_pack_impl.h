// The implicit GEMM's packers of the lowered operand (conv_pack.h), written once over a
// "runs" traits struct and compiled per ISA: conv_pack.cpp (PlainRuns: blocks of constant
// size, which compile to the baseline's vector moves), conv_pack_avx2.cpp and
// conv_pack_avx512.cpp (SimdRuns over the traits of simd_avx2.h / simd_avx512.h: a run is
// whole vectors and one masked load and store).
// Everything is in an anonymous namespace, and no standard-library template is
// instantiated here, so each ISA's code stays in its own translation unit.
#pragma once
#include <cstdint>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "conv_pack.h"

namespace minifw {
namespace {

inline int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }
inline int64_t imax(int64_t a, int64_t b) { return a > b ? a : b; }

// dst[u * width + t] = src[off[t] + u] for t < w, u < run: a run of k's (consecutive output
// columns of one output row) down w packed columns whose sources are contiguous runs. The
// backward-filter packer's transpose (Runs::transpose): by 4 x 4 blocks in registers where
// SSE is there (float); conv_pack_avx512.cpp has one by 16 x 16 blocks.
template <typename T>
inline void transpose_runs(T* dst, int width, const T* src, const int64_t* off, int64_t w, int64_t run) {
  int64_t u0 = 0;
#if defined(__SSE2__)
  if constexpr (sizeof(T) == sizeof(float)) {
    for (; u0 + 4 <= run; u0 += 4) {
      int64_t t0 = 0;
      for (; t0 + 4 <= w; t0 += 4) {
        __m128 a0 = _mm_loadu_ps(src + off[t0] + u0), a1 = _mm_loadu_ps(src + off[t0 + 1] + u0);
        __m128 a2 = _mm_loadu_ps(src + off[t0 + 2] + u0), a3 = _mm_loadu_ps(src + off[t0 + 3] + u0);
        _MM_TRANSPOSE4_PS(a0, a1, a2, a3);
        float* d = dst + u0 * width + t0;
        _mm_storeu_ps(d, a0);
        _mm_storeu_ps(d + width, a1);
        _mm_storeu_ps(d + 2 * width, a2);
        _mm_storeu_ps(d + 3 * width, a3);
      }
      for (; t0 < w; ++t0)
        for (int64_t u = u0; u < u0 + 4; ++u) dst[u * width + t0] = src[off[t0] + u];
    }
  }
#endif
  for (int64_t t = 0; t < w; ++t)
    for (int64_t u = u0; u < run; ++u) dst[u * width + t] = src[off[t] + u];
}

// dst[t] = src[t * step] for t in [0, len) (every runs' but AVX-512's for float).
template <typename T>
inline void strided_by_values(T* __restrict dst, const T* __restrict src, int64_t step, int64_t len) {
  for (int64_t t = 0; t < len; ++t, src += step) dst[t] = *src;
}

// dst[t] = src[first + t] for t in [0, len) where 0 <= first + t < limit, zero elsewhere, in
// Runs' copies and fills (every runs' clip_copy but AVX-512's for float).
template <typename Runs, typename T>
inline void clip_copy_by_parts(T* __restrict dst, const T* __restrict src, int64_t first, int64_t len,
                               int64_t limit) {
  if (first >= 0 && first + len <= limit) {  // inside the row: a plain copy
    Runs::copy(dst, src + first, len);
    return;
  }
  const int64_t lo = imin(len, first >= 0 ? 0 : -first);
  const int64_t hi = imax(lo, imin(len, first >= limit ? 0 : limit - first));
  Runs::zero(dst, lo);
  Runs::copy(dst + lo, src + first + lo, hi - lo);
  Runs::zero(dst + hi, len - hi);
}

// What PlainRuns and SimdRuns do alike, from their copies and fills: clipped and strided
// runs and the transpose (conv_pack_avx512.cpp has its own for float).
template <typename Runs, typename T>
struct RunsFromCopies {
  static constexpr bool clipped_transpose = false;  // no transpose_clipped
  static void clip_copy(T* dst, const T* src, int64_t first, int64_t len, int64_t limit) {
    clip_copy_by_parts<Runs>(dst, src, first, len, limit);
  }
  static void strided(T* dst, const T* src, int64_t step, int64_t len) { strided_by_values(dst, src, step, len); }
  static void transpose(T* dst, int width, const T* src, const int64_t* off, int64_t w, int64_t run) {
    transpose_runs(dst, width, src, off, w, run);
  }
};

// The runs of the baseline build. The packers copy many short runs (a row of 8 outputs in
// LeNet's conv2), where a call of memcpy or memset costs more than the copy: blocks of
// constant size compile to vector moves (a plain loop would be turned back into a call).
// With the calls, a fifth of AlexNetSmall conv2's forward (16 x 16 outputs under a padding
// of 2, so that every row is cut at the edge) went to the C library.
template <typename T>
struct PlainRuns : RunsFromCopies<PlainRuns<T>, T> {
  // dst[0, len) = src[0, len)
  static void copy(T* __restrict dst, const T* __restrict src, int64_t len) {
    int64_t t = 0;
    for (; t + 8 <= len; t += 8) std::memcpy(dst + t, src + t, 8 * sizeof(T));
    if (t + 4 <= len) {
      std::memcpy(dst + t, src + t, 4 * sizeof(T));
      t += 4;
    }
    switch (len - t) {
      case 3: dst[t + 2] = src[t + 2]; [[fallthrough]];
      case 2: dst[t + 1] = src[t + 1]; [[fallthrough]];
      case 1: dst[t] = src[t]; break;
      default: break;
    }
  }
  // dst[0, len) = 0
  static void zero(T* __restrict dst, int64_t len) {
    int64_t t = 0;
    for (; t + 8 <= len; t += 8) std::memset(dst + t, 0, 8 * sizeof(T));
    if (t + 4 <= len) {
      std::memset(dst + t, 0, 4 * sizeof(T));
      t += 4;
    }
    switch (len - t) {
      case 3: dst[t + 2] = T(0); [[fallthrough]];
      case 2: dst[t + 1] = T(0); [[fallthrough]];
      case 1: dst[t] = T(0); break;
      default: break;
    }
  }
};

// The runs in whole vectors of V and one masked load and store for the rest: nothing
// outside [src, src + len) is read, nothing outside [dst, dst + len) written.
template <typename V>
struct SimdRuns : RunsFromCopies<SimdRuns<V>, typename V::T> {
  using T = typename V::T;
  static void copy(T* __restrict dst, const T* __restrict src, int64_t len) {
    int64_t t = 0;
    for (; t + V::lanes <= len; t += V::lanes) V::store(dst + t, V::load(src + t));
    if (t < len) V::store_n(dst + t, V::load_n(src + t, len - t), len - t);
  }
  static void zero(T* __restrict dst, int64_t len) {
    int64_t t = 0;
    for (; t + V::lanes <= len; t += V::lanes) V::store(dst + t, V::zero());
    if (t < len) V::store_n(dst + t, V::zero(), len - t);
  }
};

// [lo, hi): the t in [0, len) with 0 <= first + t * step < limit (step > 0).
inline void strided_bounds(int64_t first, int64_t step, int64_t len, int64_t limit, int64_t& lo, int64_t& hi) {
  lo = imin(len, first >= 0 ? 0 : (-first + step - 1) / step);
  hi = imax(lo, imin(len, first >= limit ? 0 : (limit - first + step - 1) / step));
}

// dst[t] = src[first + t * step] for t in [lo, hi), zero elsewhere in [0, len).
template <typename Runs, typename T>
inline void strided_copy(T* __restrict dst, const T* __restrict src, int64_t first, int64_t step, int64_t len,
                         int64_t lo, int64_t hi) {
  Runs::zero(dst, lo);
  if (hi > lo) Runs::strided(dst + lo, src + first + lo * step, step, hi - lo);
  Runs::zero(dst + hi, len - hi);
}

// dst[t] = src[first + t * step] for t in [0, len) where 0 <= first + t * step < limit, and
// zero elsewhere.
template <typename Runs, typename T>
inline void gather_row(T* __restrict dst, const T* __restrict src, int64_t first, int64_t step, int64_t len,
                       int64_t limit) {
  if (step == 1) return Runs::clip_copy(dst, src, first, len, limit);
  int64_t lo, hi;
  strided_bounds(first, step, len, limit, lo, hi);
  strided_copy<Runs>(dst, src, first, step, len, lo, hi);
}

// A run of GEMM columns that lie in one output row of one image.
struct Segment {
  int64_t n, row, col0, len, pos;  // image, row, first column, length, position in panel
};

// Columns [j, j + w) of a (image, row, column) index space with `rows` x `cols` per image.
inline int row_segments(int64_t j, int64_t w, int64_t rows, int64_t cols, Segment* seg) {
  int count = 0;
  for (int64_t t = 0; t < w;) {
    const int64_t q = j + t, per_image = rows * cols;
    const int64_t n = q / per_image, rem = q % per_image, row = rem / cols, col = rem % cols;
    const int64_t len = imin(w - t, cols - col);
    seg[count++] = {n, row, col, len, t};
    t += len;
  }
  return count;
}

template <typename T>
inline void zero_tail(T* d, int64_t kc, int64_t w, int width) {
  if (w == width) return;
  for (int64_t k = 0; k < kc; ++k)
    for (int64_t r = w; r < width; ++r) d[k * width + r] = T(0);
}

// ---- forward: B = lowered(X)_g, outer = (n, oh, ow), k = (c, r, s) -----------
constexpr int64_t kMaxTabledTaps = 32;

template <typename T, typename Runs>
void pack_forward_lowered(const void* self, T* dst, int64_t outer0, int64_t outer_len, int64_t k0,
                          int64_t kc, int width) {
  const auto& src = *static_cast<const ForwardLowered<T>*>(self);
  const ConvShape& s = *src.s;
  Segment seg[64];
  for (int64_t p0 = 0; p0 < outer_len; p0 += width) {
    const int64_t w = imin(width, outer_len - p0);
    T* d = dst + p0 * kc;
    const int nseg = row_segments(outer0 + p0, w, s.Ho, s.Wo, seg);
    // segment by segment, down the k's: the source follows (c, r, q) by increments, and
    // whether every tap's run lies inside the row is known once per segment
    const int64_t c_first = k0 / (s.R * s.S), r_first = (k0 / s.S) % s.R, q_first = k0 % s.S;
    for (int i = 0; i < nseg; ++i) {
      const Segment& g = seg[i];
      const int64_t ih_top = g.row * s.sh - s.ph, iw0 = g.col0 * s.sw - s.pw;
      const bool inside = s.sw == 1 && iw0 >= 0 && iw0 + g.len + (s.S - 1) * s.dw <= s.W;
      // at a stride, each tap column's part of the run inside the row, once per segment (the
      // bounds take two divisions: per k, they were a sixth of AlexNet conv1's forward)
      const bool tabled = s.sw > 1 && s.S <= kMaxTabledTaps;
      int64_t qlo[kMaxTabledTaps], qhi[kMaxTabledTaps];
      if (tabled)
        for (int64_t q = 0; q < s.S; ++q) strided_bounds(iw0 + q * s.dw, s.sw, g.len, s.W, qlo[q], qhi[q]);
      const T* plane = src.x + (g.n * s.C + src.c0 + c_first) * s.H * s.W;
      int64_t r = r_first, q = q_first, ih = ih_top + r * s.dh;
      T* dk = d + g.pos;
      for (int64_t k = 0; k < kc; ++k, dk += width) {
        if (ih < 0 || ih >= s.H) {
          Runs::zero(dk, g.len);
        } else if (inside) {
          Runs::copy(dk, plane + ih * s.W + iw0 + q * s.dw, g.len);
        } else if (tabled) {
          strided_copy<Runs>(dk, plane + ih * s.W, iw0 + q * s.dw, s.sw, g.len, qlo[q], qhi[q]);
        } else {
          gather_row<Runs>(dk, plane + ih * s.W, iw0 + q * s.dw, s.sw, g.len, s.W);
        }
        if (++q == s.S) {
          q = 0;
          ih += s.dh;
          if (++r == s.R) {
            r = 0;
            ih = ih_top;
            plane += s.H * s.W;
          }
        }
      }
    }
    zero_tail(d, kc, w, width);
  }
}

// ---- backward-filter: B = lowered(X)_g^T, outer = (c, r, s), k = (n, oh, ow) --
template <typename T, typename Runs>
void pack_filter_lowered(const void* self, T* dst, int64_t outer0, int64_t outer_len, int64_t k0,
                         int64_t kc, int width) {
  const auto& src = *static_cast<const ForwardLowered<T>*>(self);
  const ConvShape& s = *src.s;
  const int64_t HW = s.H * s.W;
  int64_t off[64], dr[64], ds[64];
  for (int64_t p0 = 0; p0 < outer_len; p0 += width) {
    const int64_t w = imin(width, outer_len - p0);
    T* d = dst + p0 * kc;
    for (int64_t t = 0; t < w; ++t) {
      const int64_t j = outer0 + p0 + t;
      const int64_t c = j / (s.R * s.S), r = (j / s.S) % s.R, q = j % s.S;
      dr[t] = r * s.dh;
      ds[t] = q * s.dw;
      off[t] = c * HW + dr[t] * s.W + ds[t];
    }
    int64_t n = k0 / s.P(), oh = (k0 % s.P()) / s.Wo, ow = k0 % s.Wo;
    const int64_t span_h = (s.R - 1) * s.dh, span_w = (s.S - 1) * s.dw;
    for (int64_t k = 0; k < kc; ++k) {
      T* dk = d + k * width;
      const int64_t ih0 = oh * s.sh - s.ph, iw0 = ow * s.sw - s.pw;
      const T* plane = src.x + (n * s.C + src.c0) * HW;
      const bool rows_inside = ih0 >= 0 && ih0 + span_h < s.H;
      if constexpr (Runs::clipped_transpose) {
        // at stride 1, the k's left in this output row, each tap's run cut at the image's edge
        if (s.sw == 1) {
          const int64_t run = imin(s.Wo - ow, kc - k);
          if (rows_inside && iw0 >= 0 && iw0 + run + span_w <= s.W)  // every tap's run inside
            Runs::transpose(dk, width, plane + ih0 * s.W + iw0, off, w, run);
          else
            Runs::transpose_clipped(dk, width, plane, ih0, iw0, off, dr, ds, w, run, s.H, s.W);
          if (w < width)
            for (int64_t u = 0; u < run; ++u) Runs::zero(dk + u * width + w, width - w);
          k += run - 1;
          ow += run;  // past the run: the end of the row, or of this block of k's
          if (ow == s.Wo) {
            ow = 0;
            if (++oh == s.Ho) oh = 0, ++n;
          }
          continue;
        }
      }
      // at stride 1, the k's left in this output row whose every tap is inside the image
      const int64_t run = s.sw == 1 && rows_inside && iw0 >= 0
                              ? imin(imin(s.Wo - ow, kc - k), s.W - span_w - iw0) : 0;
      if (run >= 4) {
        Runs::transpose(dk, width, plane + ih0 * s.W + iw0, off, w, run);
        if (w < width)
          for (int64_t u = 0; u < run; ++u) Runs::zero(dk + u * width + w, width - w);
        k += run - 1;
        ow += run - 1;  // the last k of the run; the step below moves past it
      } else if (rows_inside && iw0 >= 0 && iw0 + span_w < s.W) {
        const T* base = plane + ih0 * s.W + iw0;  // every tap is inside the image
        for (int64_t t = 0; t < w; ++t) dk[t] = base[off[t]];
      } else {
        for (int64_t t = 0; t < w; ++t) {
          const int64_t ih = ih0 + dr[t], iw = iw0 + ds[t];
          dk[t] = (ih >= 0 && ih < s.H && iw >= 0 && iw < s.W)
                      ? plane[off[t] - dr[t] * s.W - ds[t] + ih * s.W + iw]
                      : T(0);
        }
      }
      Runs::zero(dk + w, width - w);
      if (++ow == s.Wo) {
        ow = 0;
        if (++oh == s.Ho) oh = 0, ++n;
      }
    }
  }
}

// ---- backward-data: B = gathered dY of one phase -------------------------------
// outer = (n, u, v) over the phase's pixels, k = (kout, tap r, tap s).
template <typename T, typename Runs>
void pack_data_gather(const void* self, T* dst, int64_t outer0, int64_t outer_len, int64_t k0,
                      int64_t kc, int width) {
  const auto& src = *static_cast<const DataGather<T>*>(self);
  const ConvShape& s = *src.s;
  const PhaseView& ph = *src.phase;
  const int64_t TR = ph.ntr, TS = ph.nts;
  Segment seg[64];
  for (int64_t p0 = 0; p0 < outer_len; p0 += width) {
    const int64_t w = imin(width, outer_len - p0);
    T* d = dst + p0 * kc;
    const int nseg = row_segments(outer0 + p0, w, ph.rows, ph.cols, seg);
    int64_t kout = k0 / (TR * TS), tr = (k0 / TS) % TR, ts = k0 % TS;
    for (int64_t k = 0; k < kc; ++k) {
      T* dk = d + k * width;
      for (int i = 0; i < nseg; ++i) {
        const Segment& g = seg[i];
        const int64_t oh = ph.oh0[tr] + g.row;
        if (oh < 0 || oh >= s.Ho) {
          Runs::zero(dk + g.pos, g.len);
          continue;
        }
        // Within a phase, consecutive input columns read consecutive output columns.
        const T* dyrow = src.dy + ((g.n * s.K + src.k0 + kout) * s.Ho + oh) * s.Wo;
        gather_row<Runs>(dk + g.pos, dyrow, ph.ow0[ts] + g.col0, 1, g.len, s.Wo);
      }
      if (++ts == TS) {
        ts = 0;
        if (++tr == TR) tr = 0, ++kout;
      }
    }
    zero_tail(d, kc, w, width);
  }
}

template <typename T, typename Runs>
ConvPackers<T> make_conv_packers() {
  return {&pack_forward_lowered<T, Runs>, &pack_filter_lowered<T, Runs>, &pack_data_gather<T, Runs>};
}

}  // namespace
}  // namespace minifw
