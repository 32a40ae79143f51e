// im2col + GEMM: the lowered matrix is materialized in the workspace, then one
// GEMM per group does the convolution (Caffe's method, and cuDNN's "GEMM"
// algorithm). The whole batch is lowered at once, so the GEMM is wide.
//
// Lowered matrix layout: row (c, r, s) over all C * R * S, column (n, oh, ow):
//   col[(c * R + r) * S + s][n * P + oh * Wo + ow] = x[n, c, oh*sh - ph + r*dh, ow*sw - pw + s*dw]
#include <omp.h>

#include <algorithm>
#include <cstring>

#include "conv.h"

namespace minifw {
namespace {

// The output columns [lo, hi) of a row whose input column iw0 + ow * step lies in
// [0, W); the others read the padding.
inline void valid_columns(int64_t iw0, int64_t step, int64_t Wo, int64_t W, int64_t& lo, int64_t& hi) {
  lo = iw0 >= 0 ? 0 : (-iw0 + step - 1) / step;
  hi = iw0 >= W ? 0 : (W - iw0 + step - 1) / step;
  lo = std::min(lo, Wo);
  hi = std::max(lo, std::min(hi, Wo));
}

// The adjoint of im2col: scatter-add the lowered gradient back onto the input.
// A channel's planes in a block of images are owned by one thread, so the adds
// never race, and the thread reads its rows of the lowered matrix in order, one
// tap at a time for the whole block, while the planes it adds into stay in the
// cache. (Blocks of images only when there are fewer channels than threads.)
template <typename T>
void col2im(const ConvShape& s, const T* col, T* dx, int nthreads) {
  const int64_t P = s.P(), NP = s.N * P, RS = s.R * s.S, HW = s.H * s.W;
  const int64_t blocks = s.C >= nthreads ? 1 : std::min<int64_t>(s.N, (nthreads + s.C - 1) / s.C);
#pragma omp parallel for num_threads(nthreads) schedule(static) if (s.C * RS * NP > 32768)
  for (int64_t unit = 0; unit < s.C * blocks; ++unit) {
    const int64_t c = unit / blocks, b = unit % blocks;
    const int64_t n0 = s.N * b / blocks, n1 = s.N * (b + 1) / blocks;
    for (int64_t n = n0; n < n1; ++n) std::fill(dx + (n * s.C + c) * HW, dx + (n * s.C + c + 1) * HW, T(0));
    for (int64_t rs = 0; rs < RS; ++rs) {
      const int64_t r = rs / s.S, q = rs % s.S;
      const int64_t iw0 = q * s.dw - s.pw;
      int64_t lo, hi;
      valid_columns(iw0, s.sw, s.Wo, s.W, lo, hi);
      for (int64_t n = n0; n < n1; ++n) {
        T* out = dx + (n * s.C + c) * HW;
        const T* in = col + (c * RS + rs) * NP + n * P;
        for (int64_t oh = 0; oh < s.Ho; ++oh) {
          const int64_t ih = oh * s.sh - s.ph + r * s.dh;
          if (ih < 0 || ih >= s.H) continue;
          const T* i = in + oh * s.Wo;
          if (s.sw == 1) {
            T* __restrict xrow = out + ih * s.W + iw0;  // a run of the row, vectorized
            for (int64_t ow = lo; ow < hi; ++ow) xrow[ow] += i[ow];
          } else {
            T* xrow = out + ih * s.W;
            for (int64_t ow = lo; ow < hi; ++ow) xrow[iw0 + ow * s.sw] += i[ow];
          }
        }
      }
    }
  }
}

// Backward-data writes the lowered gradient (C*R*S x N*P) and col2im reads it back: for
// LeNet conv2, 8 MB each way through memory. When one image's share fits in a quarter of
// the L2, the images go in chunks that fit (a quarter: 1.10 ms for LeNet conv2's, a half
// 1.13, the whole L2 1.21, one pass over the batch 1.29-1.40): a thread multiplies a
// chunk's gradient into its part of the workspace and scatters it onto the chunk's
// images while it is in the cache. Every element is the same sum in the same order as
// with the whole batch at once, so the bits do not depend on the chunks.
int64_t backward_data_chunk_images(const ConvShape& s, size_t elem) {
  const int64_t per_image = s.C * s.R * s.S * s.P() * static_cast<int64_t>(elem);
  const int64_t l2 = cpu_caches().l2 > 0 ? cpu_caches().l2 : (1 << 20);
  if (per_image <= 0 || s.N <= 1 || 4 * per_image > l2) return s.N;  // no chunking
  return std::min<int64_t>(s.N, l2 / 4 / per_image);
}

int64_t backward_data_col_images(const ConvShape& s, size_t elem, int nthreads) {
  const int64_t images = backward_data_chunk_images(s, elem);
  if (images >= s.N) return s.N;
  const int64_t chunks = (s.N + images - 1) / images;
  return images * std::min<int64_t>(std::max(nthreads, 1), chunks);
}

}  // namespace

template <typename T>
void im2col_lower(const ConvShape& s, const T* x, T* col, int nthreads) {
  const int64_t P = s.P(), NP = s.N * P, RS = s.R * s.S, HW = s.H * s.W;
  const int64_t rows = s.C * RS;
#pragma omp parallel for collapse(2) num_threads(nthreads) schedule(static) if (rows * NP > 32768)
  for (int64_t row = 0; row < rows; ++row) {
    for (int64_t n = 0; n < s.N; ++n) {
      const int64_t c = row / RS, r = (row % RS) / s.S, q = row % s.S;
      const T* plane = x + (n * s.C + c) * HW;
      T* out = col + row * NP + n * P;
      for (int64_t oh = 0; oh < s.Ho; ++oh) {
        const int64_t ih = oh * s.sh - s.ph + r * s.dh;
        T* o = out + oh * s.Wo;
        if (ih < 0 || ih >= s.H) {
          std::fill(o, o + s.Wo, T(0));
          continue;
        }
        const T* xrow = plane + ih * s.W;
        const int64_t iw0 = q * s.dw - s.pw;
        int64_t lo, hi;
        valid_columns(iw0, s.sw, s.Wo, s.W, lo, hi);
        std::fill(o, o + lo, T(0));
        if (s.sw == 1) {
          std::memcpy(o + lo, xrow + iw0 + lo, sizeof(T) * (hi - lo));
        } else {
          for (int64_t ow = lo; ow < hi; ++ow) o[ow] = xrow[iw0 + ow * s.sw];
        }
        std::fill(o + hi, o + s.Wo, T(0));
      }
    }
  }
}

template <typename T>
ConvWorkspace im2col_workspace(ConvDir dir, const ConvShape& s, int nthreads) {
  const int64_t NP = s.N * s.P(), CgRS = s.Cg() * s.R * s.S;
  const int64_t col_images = dir == ConvDir::backward_data ? backward_data_col_images(s, sizeof(T), nthreads) : s.N;
  const int64_t col_bytes = s.C * s.R * s.S * s.P() * col_images * static_cast<int64_t>(sizeof(T));
  auto pack_bytes = [](int64_t M, int64_t N, int64_t K) {
    return gemm_pack_bytes(gemm_kernel<T>(active_isa(), M), M, N, K);
  };
  int64_t per_thread = 0;
  if (dir == ConvDir::forward) per_thread = pack_bytes(s.Kg(), NP, CgRS);
  if (dir == ConvDir::backward_data) per_thread = pack_bytes(CgRS, NP, s.Kg());
  if (dir == ConvDir::backward_filter) per_thread = pack_bytes(s.Kg(), CgRS, NP);
  return {col_bytes, per_thread * gemm_threads_in_flight(s.groups, nthreads)};
}

template <typename T>
void im2col_forward(const ConvShape& s, const T* x, const T* w, T* y, T* col, int nthreads) {
  const int64_t P = s.P(), NP = s.N * P, CgRS = s.Cg() * s.R * s.S, Kg = s.Kg();
  im2col_lower(s, x, col, nthreads);
  for_each_group(s.groups, nthreads, [&](int64_t g, int threads) {
    StridedMatrix<T> a{w + g * Kg * CgRS, CgRS, false};
    StridedMatrix<T> b{col + g * CgRS * NP, NP, true};  // outer = column of col
    gemm_packed<T>(Kg, NP, CgRS, T(1), strided_source(&a), strided_source(&b), T(0),
                   nchw_output(y, s.K, P, g * Kg), threads);
  });
}

template <typename T>
void im2col_backward_data(const ConvShape& s, const T* dy, const T* w, T* dx, T* col, int nthreads) {
  const int64_t P = s.P(), CgRS = s.Cg() * s.R * s.S, Kg = s.Kg(), CRS = s.C * s.R * s.S;
  const int64_t images = backward_data_chunk_images(s, sizeof(T));
  // the chunk [n0, n1) through `part` of the workspace, on `threads` threads
  auto run = [&](int64_t n0, int64_t n1, T* part, int threads) {
    ConvShape c = s;
    c.N = n1 - n0;
    const int64_t NP = c.N * P;
    for_each_group(s.groups, threads, [&](int64_t g, int group_threads) {
      StridedMatrix<T> a{w + g * Kg * CgRS, CgRS, true};  // W_g^T
      ChannelMatrix<T> b{dy + n0 * s.K * P, P, s.K * P, g * Kg};
      gemm_packed<T>(CgRS, NP, Kg, T(1), strided_source(&a), channel_cols_source(&b), T(0),
                     GemmOutput<T>{part + g * CgRS * NP, NP}, group_threads);
    });
    col2im(c, part, dx + n0 * s.C * s.H * s.W, threads);
  };
  if (images >= s.N) return run(0, s.N, col, nthreads);
  const int64_t chunks = (s.N + images - 1) / images;
  const int threads = static_cast<int>(std::min<int64_t>(std::max(nthreads, 1), chunks));
#pragma omp parallel for num_threads(threads) schedule(static, 1) if (threads > 1)
  for (int64_t chunk = 0; chunk < chunks; ++chunk) {
    const int t = threads > 1 ? omp_get_thread_num() : 0;
    run(chunk * images, std::min(s.N, (chunk + 1) * images), col + t * CRS * images * P, 1);
  }
}

template <typename T>
void im2col_backward_filter(const ConvShape& s, const T* x, const T* dy, T* dw, T* col, int nthreads) {
  const int64_t P = s.P(), NP = s.N * P, CgRS = s.Cg() * s.R * s.S, Kg = s.Kg();
  im2col_lower(s, x, col, nthreads);
  for_each_group(s.groups, nthreads, [&](int64_t g, int threads) {
    ChannelMatrix<T> a{dy, P, s.K * P, g * Kg};
    StridedMatrix<T> b{col + g * CgRS * NP, NP, false};  // outer = row (c, r, s) of col
    gemm_packed<T>(Kg, CgRS, NP, T(1), channel_rows_source(&a), strided_source(&b), T(0),
                   GemmOutput<T>{dw + g * Kg * CgRS, CgRS}, threads);
  });
}

#define MINIFW_INSTANTIATE_IM2COL(T)                                                                \
  template void im2col_lower<T>(const ConvShape&, const T*, T*, int);                              \
  template ConvWorkspace im2col_workspace<T>(ConvDir, const ConvShape&, int);                      \
  template void im2col_forward<T>(const ConvShape&, const T*, const T*, T*, T*, int);              \
  template void im2col_backward_data<T>(const ConvShape&, const T*, const T*, T*, T*, int);        \
  template void im2col_backward_filter<T>(const ConvShape&, const T*, const T*, T*, T*, int);
MINIFW_INSTANTIATE_IM2COL(float)
MINIFW_INSTANTIATE_IM2COL(double)
}  // namespace minifw
