// Implicit GEMM (Chetlur et al. 2014, "cuDNN", section 3): the convolution is
// the same GEMM as im2col + GEMM, but the lowered matrix is never stored.
// Its tiles are formed on the fly while packing the GEMM operand, straight
// from the input tensor, so the only workspace is the packing buffers. (One
// exception, below: the backward-filter of a small filter bank lowers one image
// at a time into a thread's scratch and runs dot products.)
//
//   forward          Y_g  (Kg x N*P)   = W_g (Kg x Cg*R*S)   * lowered(X)_g
//   backward-filter  dW_g (Kg x Cg*R*S) = dY_g (Kg x N*P)     * lowered(X)_g^T
//   backward-data    dX_g (Cg x N*H*W) = W_g^T (Cg x Kg*R*S) * gathered(dY)_g
//
// Backward-data is written as a gather (each input pixel collects the output
// pixels it fed) rather than im2col's scatter. With stride s, an input pixel
// at (ih, iw) receives from tap r only when (ih + ph - r*dh) is divisible by
// s; splitting the input pixels into s*s phases by (ih mod s, iw mod s) makes
// the set of contributing taps fixed within a phase, so each phase is one
// dense GEMM with no multiplications by structural zeros.
#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "conv.h"

namespace minifw {
namespace {

inline int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

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
    const int64_t len = std::min(w - t, cols - col);
    seg[count++] = {n, row, col, len, t};
    t += len;
  }
  return count;
}

// dst[0, len) = src[0, len). The packers copy many short runs (a row of 8 outputs in LeNet's
// conv2), where a call of memcpy costs more than the copy: blocks of constant size compile
// to vector moves (a plain loop would be turned back into a call of memcpy).
template <typename T>
inline void copy_run(T* __restrict dst, const T* __restrict src, int64_t len) {
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

// Copy src[first + t * step] for t in [0, len) where 0 <= first + t*step < limit, zeros elsewhere
// (the common cases without memcpy or divisions: see copy_run).
template <typename T>
inline void gather_row(T* __restrict dst, const T* __restrict src, int64_t first, int64_t step, int64_t len,
                       int64_t limit) {
  if (step == 1 && first >= 0 && first + len <= limit) {  // inside the row: a plain copy
    copy_run(dst, src + first, len);
    return;
  }
  int64_t lo, hi;
  if (step == 1) {
    lo = first >= 0 ? 0 : -first;
    hi = first >= limit ? 0 : limit - first;
  } else {
    lo = first >= 0 ? 0 : (-first + step - 1) / step;
    hi = first >= limit ? 0 : (limit - first + step - 1) / step;
  }
  lo = std::min(lo, len);
  hi = std::max(lo, std::min(hi, len));
  for (int64_t t = 0; t < lo; ++t) dst[t] = T(0);
  if (step == 1) {
    std::memcpy(dst + lo, src + first + lo, sizeof(T) * (hi - lo));
  } else {
    for (int64_t t = lo; t < hi; ++t) dst[t] = src[first + t * step];
  }
  for (int64_t t = hi; t < len; ++t) dst[t] = T(0);
}

template <typename T>
inline void zero_tail(T* d, int64_t kc, int64_t w, int width) {
  if (w == width) return;
  for (int64_t k = 0; k < kc; ++k)
    for (int64_t r = w; r < width; ++r) d[k * width + r] = T(0);
}

// ---- forward: B = lowered(X)_g, outer = (n, oh, ow), k = (c, r, s) -----------
template <typename T>
struct ForwardLowered {
  const ConvShape* s;
  const T* x;
  int64_t c0;
};

template <typename T>
void pack_forward_lowered(const void* self, T* dst, int64_t outer0, int64_t outer_len, int64_t k0,
                          int64_t kc, int width) {
  const auto& src = *static_cast<const ForwardLowered<T>*>(self);
  const ConvShape& s = *src.s;
  Segment seg[64];
  for (int64_t p0 = 0; p0 < outer_len; p0 += width) {
    const int64_t w = std::min<int64_t>(width, outer_len - p0);
    T* d = dst + p0 * kc;
    const int nseg = row_segments(outer0 + p0, w, s.Ho, s.Wo, seg);
    // segment by segment, down the k's: the source follows (c, r, q) by increments, and
    // whether every tap's run lies inside the row is known once per segment
    const int64_t c_first = k0 / (s.R * s.S), r_first = (k0 / s.S) % s.R, q_first = k0 % s.S;
    for (int i = 0; i < nseg; ++i) {
      const Segment& g = seg[i];
      const int64_t ih_top = g.row * s.sh - s.ph, iw0 = g.col0 * s.sw - s.pw;
      const bool inside = s.sw == 1 && iw0 >= 0 && iw0 + g.len + (s.S - 1) * s.dw <= s.W;
      const T* plane = src.x + (g.n * s.C + src.c0 + c_first) * s.H * s.W;
      int64_t r = r_first, q = q_first, ih = ih_top + r * s.dh;
      T* dk = d + g.pos;
      for (int64_t k = 0; k < kc; ++k, dk += width) {
        if (ih < 0 || ih >= s.H) {
          std::fill(dk, dk + g.len, T(0));
        } else if (inside) {
          copy_run(dk, plane + ih * s.W + iw0 + q * s.dw, g.len);
        } else {
          gather_row(dk, plane + ih * s.W, iw0 + q * s.dw, s.sw, g.len, s.W);
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

// dst[u * width + t] = src[off[t] + u] for t < w, u < run: a run of k's (consecutive output
// columns of one output row) down w packed columns whose sources are contiguous runs. The
// packer's transpose: by 4 x 4 blocks in registers where SSE is there (float).
template <typename T>
inline void transpose_runs(T* dst, int width, const T* src, const int64_t* off, int64_t w, int64_t run) {
  int64_t u0 = 0;
#if defined(__SSE2__)
  if constexpr (std::is_same_v<T, float>) {
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

// ---- backward-filter: B = lowered(X)_g^T, outer = (c, r, s), k = (n, oh, ow) --
template <typename T>
void pack_filter_lowered(const void* self, T* dst, int64_t outer0, int64_t outer_len, int64_t k0,
                         int64_t kc, int width) {
  const auto& src = *static_cast<const ForwardLowered<T>*>(self);
  const ConvShape& s = *src.s;
  const int64_t HW = s.H * s.W;
  int64_t off[64], dr[64], ds[64];
  for (int64_t p0 = 0; p0 < outer_len; p0 += width) {
    const int64_t w = std::min<int64_t>(width, outer_len - p0);
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
      // at stride 1, the k's left in this output row whose every tap is inside the image
      const int64_t run = s.sw == 1 && rows_inside && iw0 >= 0
                              ? std::min({s.Wo - ow, kc - k, s.W - span_w - iw0}) : 0;
      if (run >= 4) {
        transpose_runs(dk, width, plane + ih0 * s.W + iw0, off, w, run);
        for (int64_t u = 0; u < run; ++u)
          for (int64_t t = w; t < width; ++t) dk[u * width + t] = T(0);
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
      for (int64_t t = w; t < width; ++t) dk[t] = T(0);
      if (++ow == s.Wo) {
        ow = 0;
        if (++oh == s.Ho) oh = 0, ++n;
      }
    }
  }
}

// ---- backward-data, one phase (ah, aw) ------------------------------------------
struct Phase {
  int64_t ah, aw;                      // residues of ih, iw modulo the stride
  int64_t rows, cols;                  // input rows/cols in this phase
  std::vector<int64_t> taps_r, taps_s; // contributing kernel taps
  std::vector<int64_t> oh0, ow0;       // output row/col feeding the phase's first pixel, per tap
};

Phase make_phase(const ConvShape& s, int64_t ah, int64_t aw) {
  Phase ph;
  ph.ah = ah;
  ph.aw = aw;
  ph.rows = ah < s.H ? (s.H - ah + s.sh - 1) / s.sh : 0;
  ph.cols = aw < s.W ? (s.W - aw + s.sw - 1) / s.sw : 0;
  for (int64_t r = 0; r < s.R; ++r) {
    const int64_t num = ah + s.ph - r * s.dh;
    if (((num % s.sh) + s.sh) % s.sh == 0) {
      ph.taps_r.push_back(r);
      ph.oh0.push_back(floor_div(num, s.sh));
    }
  }
  for (int64_t q = 0; q < s.S; ++q) {
    const int64_t num = aw + s.pw - q * s.dw;
    if (((num % s.sw) + s.sw) % s.sw == 0) {
      ph.taps_s.push_back(q);
      ph.ow0.push_back(floor_div(num, s.sw));
    }
  }
  return ph;
}

template <typename T>
struct DataGather {
  const ConvShape* s;
  const Phase* phase;
  const T* dy;  // B source
  const T* w;   // A source
  int64_t k0, c0;  // first output / input channel of the group
};

// A = W_g^T restricted to the phase's taps: outer = c, k = (kout, tap r, tap s).
template <typename T>
void pack_data_weights(const void* self, T* dst, int64_t outer0, int64_t outer_len, int64_t k0,
                       int64_t kc, int width) {
  const auto& src = *static_cast<const DataGather<T>*>(self);
  const ConvShape& s = *src.s;
  const Phase& ph = *src.phase;
  const int64_t TR = ph.taps_r.size(), TS = ph.taps_s.size(), RS = s.R * s.S, Cg = s.Cg();
  for (int64_t p0 = 0; p0 < outer_len; p0 += width) {
    const int64_t w = std::min<int64_t>(width, outer_len - p0);
    T* d = dst + p0 * kc;
    int64_t kout = k0 / (TR * TS), tr = (k0 / TS) % TR, ts = k0 % TS;
    for (int64_t k = 0; k < kc; ++k) {
      const T* col = src.w + ((src.k0 + kout) * Cg + outer0 + p0) * RS + ph.taps_r[tr] * s.S + ph.taps_s[ts];
      T* dk = d + k * width;
      int64_t r = 0;
      for (; r < w; ++r) dk[r] = col[r * RS];
      for (; r < width; ++r) dk[r] = T(0);
      if (++ts == TS) {
        ts = 0;
        if (++tr == TR) tr = 0, ++kout;
      }
    }
  }
}

// B = gathered dY: outer = (n, u, v) over the phase's pixels, k = (kout, tap r, tap s).
template <typename T>
void pack_data_gather(const void* self, T* dst, int64_t outer0, int64_t outer_len, int64_t k0,
                      int64_t kc, int width) {
  const auto& src = *static_cast<const DataGather<T>*>(self);
  const ConvShape& s = *src.s;
  const Phase& ph = *src.phase;
  const int64_t TR = ph.taps_r.size(), TS = ph.taps_s.size();
  Segment seg[64];
  for (int64_t p0 = 0; p0 < outer_len; p0 += width) {
    const int64_t w = std::min<int64_t>(width, outer_len - p0);
    T* d = dst + p0 * kc;
    const int nseg = row_segments(outer0 + p0, w, ph.rows, ph.cols, seg);
    int64_t kout = k0 / (TR * TS), tr = (k0 / TS) % TR, ts = k0 % TS;
    for (int64_t k = 0; k < kc; ++k) {
      T* dk = d + k * width;
      for (int i = 0; i < nseg; ++i) {
        const Segment& g = seg[i];
        const int64_t oh = ph.oh0[tr] + g.row;
        if (oh < 0 || oh >= s.Ho) {
          std::fill(dk + g.pos, dk + g.pos + g.len, T(0));
          continue;
        }
        // Within a phase, consecutive input columns read consecutive output columns.
        const T* dyrow = src.dy + ((g.n * s.K + src.k0 + kout) * s.Ho + oh) * s.Wo;
        gather_row(dk + g.pos, dyrow, ph.ow0[ts] + g.col0, 1, g.len, s.Wo);
      }
      if (++ts == TS) {
        ts = 0;
        if (++tr == TR) tr = 0, ++kout;
      }
    }
    zero_tail(d, kc, w, width);
  }
}

// ---- backward-filter of a small filter bank over many pixels -----------------
// LeNet conv1's filter gradient is 20 x 25 values, each summed over 36,864 pixels (64
// images of 24 x 24). As the packed GEMM, with K running over every pixel of the batch,
// all of dY was packed into row panels and the lowered input into 32 columns for 25;
// packing took 44% of the time. Here, image by image, the image is lowered into a
// C*R*S x P matrix in the thread's scratch, and dY's Kg x P rows, read in place, times
// its transpose are added into the gradient by the dot-product kernel (gemm_dot.h), which
// packs nothing (LeNet conv1's: 0.445 -> 0.37-0.39 ms alone, 0.67 -> 0.57 ms with its bias
// inside a training step). The images go in fixed chunks: each chunk sums its images in
// order into a partial of its own, and the partials are added in chunk order, so the bits
// are the same for every thread count.
constexpr int64_t kDotFilterMaxValues = 1024;      // Kg * Cg*R*S at most: a small bank
constexpr int64_t kDotFilterMinPixels = 256;       // P at least: long dot products
constexpr int64_t kDotFilterMaxLowered = 1 << 20;  // C*R*S * P at most: one lowered image
constexpr int64_t kDotFilterImagesPerChunk = 4;
constexpr int64_t kDotFilterMinImages = 2 * kDotFilterImagesPerChunk;

bool dot_backward_filter_shape(const ConvShape& s) {
  return s.Kg() * s.Cg() * s.R * s.S <= kDotFilterMaxValues && s.P() >= kDotFilterMinPixels &&
         s.C * s.R * s.S * s.P() <= kDotFilterMaxLowered && s.N >= kDotFilterMinImages;
}

int64_t dot_filter_chunks(const ConvShape& s) {
  return (s.N + kDotFilterImagesPerChunk - 1) / kDotFilterImagesPerChunk;
}

template <typename T>
void dot_backward_filter(const ConvShape& s, const T* x, const T* dy, T* dw, int nthreads) {
  const GemmKernels<T>& ks = select_isa_variant<GemmKernels<T>>(active_isa());
  const int64_t P = s.P(), CRS = s.C * s.R * s.S, CgRS = s.Cg() * s.R * s.S, Kg = s.Kg();
  const int64_t values = s.K * CgRS, chunks = dot_filter_chunks(s);
  T* partials = static_cast<T*>(thread_scratch(2, sizeof(T) * values * chunks));
  ConvShape image = s;
  image.N = 1;
  const int threads = static_cast<int>(std::min<int64_t>(std::max(nthreads, 1), chunks));
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (int64_t chunk = 0; chunk < chunks; ++chunk) {
    T* col = static_cast<T*>(thread_scratch(3, sizeof(T) * CRS * P));
    T* part = partials + chunk * values;
    const int64_t n0 = chunk * kDotFilterImagesPerChunk;
    const int64_t n1 = std::min(s.N, n0 + kDotFilterImagesPerChunk);
    for (int64_t n = n0; n < n1; ++n) {
      im2col_lower(image, x + n * s.C * s.H * s.W, col, 1);
      for (int64_t g = 0; g < s.groups; ++g)
        ks.dot(Kg, 0, CgRS, P, T(1), dy + (n * s.K + g * Kg) * P, P, col + g * CgRS * P, P,
               n == n0 ? T(0) : T(1), part + g * Kg * CgRS, CgRS);
    }
  }
  std::copy(partials, partials + values, dw);
  for (int64_t chunk = 1; chunk < chunks; ++chunk) {
    const T* part = partials + chunk * values;
    for (int64_t i = 0; i < values; ++i) dw[i] += part[i];
  }
}
}  // namespace

template <typename T>
ConvWorkspace implicit_workspace(ConvDir dir, const ConvShape& s, int nthreads) {
  const int64_t NP = s.N * s.P(), CgRS = s.Cg() * s.R * s.S;
  int64_t per_thread = 0;
  if (dir == ConvDir::forward) per_thread = gemm_pack_bytes(lean_gemm_kernel<T>(s.Kg()), s.Kg(), NP, CgRS);
  if (dir == ConvDir::backward_filter && dot_backward_filter_shape(s)) {
    // a lowered image per thread, and the chunks' partials
    const int64_t chunks = dot_filter_chunks(s);
    const int64_t threads = std::min<int64_t>(std::max(nthreads, 1), chunks);
    const int64_t bytes = threads * s.C * s.R * s.S * s.P() + chunks * s.K * CgRS;
    return {0, bytes * static_cast<int64_t>(sizeof(T))};
  }
  if (dir == ConvDir::backward_filter)
    per_thread = gemm_pack_bytes(lean_gemm_kernel<T>(s.Kg()), s.Kg(), CgRS, NP);
  if (dir == ConvDir::backward_data)  // the largest phase bounds every phase
    per_thread = gemm_pack_bytes(lean_gemm_kernel<T>(s.Cg()), s.Cg(), s.N * s.H * s.W, s.Kg() * s.R * s.S);
  return {0, per_thread * gemm_threads_in_flight(s.groups, nthreads)};
}

template <typename T>
void implicit_forward(const ConvShape& s, const T* x, const T* w, T* y, int nthreads) {
  const GemmKernel<T> kern = lean_gemm_kernel<T>(s.Kg());
  const int64_t P = s.P(), CgRS = s.Cg() * s.R * s.S, Kg = s.Kg();
  for_each_group(s.groups, nthreads, [&](int64_t g, int threads) {
    StridedMatrix<T> a{w + g * Kg * CgRS, CgRS, false};
    ForwardLowered<T> b{&s, x, g * s.Cg()};
    gemm_packed<T>(Kg, s.N * P, CgRS, T(1), strided_source(&a), {&pack_forward_lowered<T>, &b}, T(0),
                   nchw_output(y, s.K, P, g * Kg), threads, &kern);
  });
}

template <typename T>
void implicit_backward_filter(const ConvShape& s, const T* x, const T* dy, T* dw, int nthreads) {
  if (dot_backward_filter_shape(s)) return dot_backward_filter(s, x, dy, dw, nthreads);
  const GemmKernel<T> kern = lean_gemm_kernel<T>(s.Kg());
  const int64_t P = s.P(), CgRS = s.Cg() * s.R * s.S, Kg = s.Kg();
  for_each_group(s.groups, nthreads, [&](int64_t g, int threads) {
    ChannelMatrix<T> a{dy, P, s.K * P, g * Kg};
    ForwardLowered<T> b{&s, x, g * s.Cg()};
    gemm_packed<T>(Kg, CgRS, s.N * P, T(1), channel_rows_source(&a), {&pack_filter_lowered<T>, &b},
                   T(0), GemmOutput<T>{dw + g * Kg * CgRS, CgRS}, threads, &kern);
  });
}

template <typename T>
void implicit_backward_data(const ConvShape& s, const T* dy, const T* w, T* dx, int nthreads) {
  const GemmKernel<T> kern = lean_gemm_kernel<T>(s.Cg());
  const int64_t HW = s.H * s.W, Cg = s.Cg(), Kg = s.Kg();
  for (int64_t ah = 0; ah < s.sh; ++ah) {
    for (int64_t aw = 0; aw < s.sw; ++aw) {
      const Phase ph = make_phase(s, ah, aw);
      if (ph.rows == 0 || ph.cols == 0) continue;
      const int64_t taps = static_cast<int64_t>(ph.taps_r.size() * ph.taps_s.size());
      for_each_group(s.groups, nthreads, [&](int64_t g, int threads) {
        DataGather<T> src{&s, &ph, dy, w, g * Kg, g * Cg};
        GemmOutput<T> out{dx + g * Cg * HW + ah * s.W + aw, HW};
        out.cols_per_row = ph.cols;
        out.rows_per_image = ph.rows;
        out.col_stride = s.sw;
        out.row_stride = s.sh * s.W;
        out.image_stride = s.C * HW;
        // taps == 0: no output pixel reads this phase; the GEMM with K = 0 writes zeros.
        gemm_packed<T>(Cg, s.N * ph.rows * ph.cols, Kg * taps, T(1), {&pack_data_weights<T>, &src},
                       {&pack_data_gather<T>, &src}, T(0), out, threads, &kern);
      });
    }
  }
}

#define MINIFW_INSTANTIATE_IMPLICIT(T)                                                             \
  template ConvWorkspace implicit_workspace<T>(ConvDir, const ConvShape&, int);                   \
  template void implicit_forward<T>(const ConvShape&, const T*, const T*, T*, int);               \
  template void implicit_backward_data<T>(const ConvShape&, const T*, const T*, T*, int);         \
  template void implicit_backward_filter<T>(const ConvShape&, const T*, const T*, T*, int);
MINIFW_INSTANTIATE_IMPLICIT(float)
MINIFW_INSTANTIATE_IMPLICIT(double)
}  // namespace minifw
