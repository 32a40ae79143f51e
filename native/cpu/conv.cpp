// Convolution: shapes, the algorithm table and the one dispatch point.
#include "conv.h"

#include <omp.h>

#include <algorithm>
#include <initializer_list>
#include <stdexcept>

#include "parallel.h"
#include "tensor_ops.h"

namespace minifw {

ConvShape make_conv_shape(int64_t N, int64_t C, int64_t H, int64_t W, int64_t K, int64_t Cg,
                          int64_t R, int64_t S, int64_t sh, int64_t sw, int64_t ph, int64_t pw,
                          int64_t dh, int64_t dw, int64_t groups) {
  auto fail = [](const std::string& what) { throw std::invalid_argument("convolution: " + what); };
  if (N < 1 || C < 1 || H < 1 || W < 1 || K < 1 || Cg < 1 || R < 1 || S < 1)
    fail("every dimension must be >= 1");
  if (sh < 1 || sw < 1 || dh < 1 || dw < 1 || groups < 1) fail("stride, dilation, groups must be >= 1");
  if (ph < 0 || pw < 0) fail("padding must be >= 0");
  if (C % groups || K % groups || C / groups != Cg) fail("channels do not match groups");
  if (R > (int64_t{1} << 30) || S > (int64_t{1} << 30) || dh > (int64_t{1} << 30) || dw > (int64_t{1} << 30) ||
      ph > (int64_t{1} << 40) || pw > (int64_t{1} << 40) || H > (int64_t{1} << 40) || W > (int64_t{1} << 40))
    fail("sizes overflow");
  const int64_t eff_h = dh * (R - 1) + 1, eff_w = dw * (S - 1) + 1;
  if (H + 2 * ph < eff_h || W + 2 * pw < eff_w) fail("output would be empty");
  // Every buffer a kernel indexes must have an element count that fits int64;
  // otherwise a wrapped product could pass the callers' size checks.
  auto product = [&](std::initializer_list<int64_t> factors) {
    int64_t p = 1;
    for (int64_t f : factors)
      if (__builtin_mul_overflow(p, f, &p) || p > (int64_t{1} << 58)) fail("sizes overflow");
    return p;
  };
  product({N, C, H + 2 * ph, W + 2 * pw});
  product({K, Cg, R, S});
  product({N, K, H + 2 * ph, W + 2 * pw});
  product({N, C, R, S, H + 2 * ph, W + 2 * pw});  // bounds the lowered matrix
  ConvShape s{N, C, H, W, K, R, S, sh, sw, ph, pw, dh, dw, groups, 0, 0};
  s.Ho = (H + 2 * ph - eff_h) / sh + 1;
  s.Wo = (W + 2 * pw - eff_w) / sw + 1;
  return s;
}

ConvDir parse_conv_dir(const std::string& name) {
  if (name == "forward") return ConvDir::forward;
  if (name == "backward_data") return ConvDir::backward_data;
  if (name == "backward_filter") return ConvDir::backward_filter;
  throw std::invalid_argument("unknown convolution direction '" + name + "'");
}

ConvAlgo parse_conv_algo(const std::string& name) {
  if (name == "im2col_gemm") return ConvAlgo::im2col_gemm;
  if (name == "implicit_gemm") return ConvAlgo::implicit_gemm;
  if (name == "winograd") return ConvAlgo::winograd;
  if (name == "gemm_1x1") return ConvAlgo::gemm_1x1;
  if (name == "direct") return ConvAlgo::direct;
  if (name == "depthwise") return ConvAlgo::depthwise;
  throw std::invalid_argument("unknown convolution algorithm '" + name + "'");
}

bool conv_algo_supports(ConvAlgo algo, ConvDir dir, const ConvShape& s) {
  switch (algo) {
    case ConvAlgo::im2col_gemm:
    case ConvAlgo::implicit_gemm:
      return true;
    case ConvAlgo::winograd:
      // F(4x4, 3x3). Backward-data is a winograd forward over dy with padding
      // 2 - p, hence p <= 2 (the same limit is kept for the other directions).
      return s.R == 3 && s.S == 3 && s.sh == 1 && s.sw == 1 && s.dh == 1 && s.dw == 1 && s.ph <= 2 && s.pw <= 2;
    case ConvAlgo::gemm_1x1:
      return s.R == 1 && s.S == 1 && s.sh == 1 && s.sw == 1 && s.ph == 0 && s.pw == 0;
    case ConvAlgo::direct:
      // Each tap reads the padded input shifted (at a stride, the shifted phase of it:
      // conv_direct.cpp); backward-data is a forward over dY only at stride 1.
      return dir != ConvDir::backward_data || (s.sh == 1 && s.sw == 1);
    case ConvAlgo::depthwise:
      return s.C == s.groups;  // one input channel per group, any multiplier, stride, padding, dilation
  }
  return false;
}

template <typename T>
ConvWorkspace conv_workspace(ConvAlgo algo, ConvDir dir, const ConvShape& s, int nthreads) {
  if (!conv_algo_supports(algo, dir, s)) throw std::invalid_argument("algorithm does not support this problem");
  switch (algo) {
    case ConvAlgo::im2col_gemm: return im2col_workspace<T>(dir, s, nthreads);
    case ConvAlgo::implicit_gemm: return implicit_workspace<T>(dir, s, nthreads);
    case ConvAlgo::winograd: return winograd_workspace<T>(dir, s, nthreads);
    case ConvAlgo::gemm_1x1: return gemm1x1_workspace<T>(dir, s, nthreads);
    case ConvAlgo::direct: return direct_workspace<T>(dir, s, nthreads);
    case ConvAlgo::depthwise: return {0, 0};
  }
  return {0, 0};
}

template <typename T>
void conv_forward(ConvAlgo algo, const ConvShape& s, const T* x, const T* w, const T* bias, T* y,
                  void* workspace, int nthreads) {
  T* ws = static_cast<T*>(workspace);
  switch (algo) {
    case ConvAlgo::im2col_gemm: im2col_forward(s, x, w, y, ws, nthreads); break;
    case ConvAlgo::implicit_gemm: implicit_forward(s, x, w, y, nthreads); break;
    case ConvAlgo::winograd: winograd_forward(s, x, w, y, ws, nthreads); break;
    case ConvAlgo::gemm_1x1: gemm1x1_forward(s, x, w, y, nthreads); break;
    case ConvAlgo::direct: return direct_forward(s, x, w, bias, y, ws, nthreads);  // adds the bias itself
    case ConvAlgo::depthwise: return depthwise_forward(s, x, w, bias, y, nthreads);  // so does depthwise
  }
  if (bias) bias_add<T>(s.N, s.K, s.P(), y, bias, y, nthreads);  // in place: y[n, k, p] += bias[k]
}

template <typename T>
void conv_backward_data(ConvAlgo algo, const ConvShape& s, const T* dy, const T* w, T* dx,
                        void* workspace, int nthreads) {
  T* ws = static_cast<T*>(workspace);
  switch (algo) {
    case ConvAlgo::im2col_gemm: im2col_backward_data(s, dy, w, dx, ws, nthreads); break;
    case ConvAlgo::implicit_gemm: implicit_backward_data(s, dy, w, dx, nthreads); break;
    case ConvAlgo::winograd: winograd_backward_data(s, dy, w, dx, ws, nthreads); break;
    case ConvAlgo::gemm_1x1: gemm1x1_backward_data(s, dy, w, dx, nthreads); break;
    case ConvAlgo::direct: direct_backward_data(s, dy, w, dx, ws, nthreads); break;
    case ConvAlgo::depthwise: depthwise_backward_data(s, dy, w, dx, nthreads); break;
  }
}

template <typename T>
void conv_backward_filter(ConvAlgo algo, const ConvShape& s, const T* x, const T* dy, T* dw,
                          void* workspace, int nthreads) {
  T* ws = static_cast<T*>(workspace);
  switch (algo) {
    case ConvAlgo::im2col_gemm: im2col_backward_filter(s, x, dy, dw, ws, nthreads); break;
    case ConvAlgo::implicit_gemm: implicit_backward_filter(s, x, dy, dw, nthreads); break;
    case ConvAlgo::gemm_1x1: gemm1x1_backward_filter(s, x, dy, dw, nthreads); break;
    case ConvAlgo::winograd: winograd_backward_filter(s, x, dy, dw, ws, nthreads); break;
    case ConvAlgo::direct: direct_backward_filter(s, x, dy, dw, ws, nthreads); break;
    case ConvAlgo::depthwise: depthwise_backward_filter(s, x, dy, dw, nthreads); break;
  }
}

// ---- channel-matrix packers ---------------------------------------------------

namespace {
// outer = channel, k = (image, pixel): each micro-panel row r streams along
// pixels of one channel, switching image every P columns.
template <typename T>
void pack_channel_rows(const void* self, T* dst, int64_t outer0, int64_t outer_len, int64_t k0,
                       int64_t kc, int width) {
  const auto& m = *static_cast<const ChannelMatrix<T>*>(self);
  for (int64_t p0 = 0; p0 < outer_len; p0 += width) {
    const int64_t w = std::min<int64_t>(width, outer_len - p0);
    T* d = dst + p0 * kc;
    int64_t n = k0 / m.P, p = k0 % m.P;
    for (int64_t k = 0; k < kc;) {
      const int64_t run = std::min(kc - k, m.P - p);
      const T* src = m.base + n * m.image_stride + (m.c0 + outer0 + p0) * m.P + p;
      for (int64_t r = 0; r < w; ++r) {
        const T* s = src + r * m.P;
        for (int64_t t = 0; t < run; ++t) d[(k + t) * width + r] = s[t];
      }
      for (int64_t r = w; r < width; ++r)
        for (int64_t t = 0; t < run; ++t) d[(k + t) * width + r] = T(0);
      k += run;
      ++n;
      p = 0;
    }
  }
}

// outer = (image, pixel), k = channel: each k gives `width` values that are
// contiguous within one image.
template <typename T>
void pack_channel_cols(const void* self, T* dst, int64_t outer0, int64_t outer_len, int64_t k0,
                       int64_t kc, int width) {
  const auto& m = *static_cast<const ChannelMatrix<T>*>(self);
  for (int64_t p0 = 0; p0 < outer_len; p0 += width) {
    const int64_t w = std::min<int64_t>(width, outer_len - p0);
    T* d = dst + p0 * kc;
    for (int64_t j = 0; j < w;) {
      const int64_t col = outer0 + p0 + j;
      const int64_t n = col / m.P, p = col % m.P;
      const int64_t run = std::min(w - j, m.P - p);
      const T* src = m.base + n * m.image_stride + (m.c0 + k0) * m.P + p;
      for (int64_t k = 0; k < kc; ++k) {
        const T* s = src + k * m.P;
        T* dk = d + k * width + j;
        for (int64_t t = 0; t < run; ++t) dk[t] = s[t];
      }
      j += run;
    }
    if (w < width)
      for (int64_t k = 0; k < kc; ++k)
        for (int64_t r = w; r < width; ++r) d[k * width + r] = T(0);
  }
}
}  // namespace

template <typename T>
PackSource<T> channel_rows_source(const ChannelMatrix<T>* m) {
  return {&pack_channel_rows<T>, m};
}
template <typename T>
PackSource<T> channel_cols_source(const ChannelMatrix<T>* m) {
  return {&pack_channel_cols<T>, m};
}

template <typename T>
GemmKernel<T> lean_gemm_kernel(int64_t M) {
  GemmKernel<T> k = gemm_kernel<T>(active_isa(), M);
  // A (mc >= the M of most layers) is packed once per K block, B in narrow
  // blocks: both are packed exactly once, in a few hundred KB per thread.
  // With few rows of A, the kc x nc block of B is most of the memory and is
  // reused by few rows anyway: halve kc, and run no longer K whole. (With more
  // rows a K up to kc_whole still runs whole: AlexNet conv1's forward, K 363,
  // took 20.7 ms instead of 22.7 on a Zen 4 with 0.6 MiB of workspace, not 0.3.)
  k.kc = std::min<int64_t>(k.kc, M >= 4 * k.mr ? 256 : 128);
  if (M < 4 * k.mr) k.kc_whole = k.kc;
  k.mc = (512 / k.mr) * k.mr;
  k.nc = k.nr * 4;
  k.a_outer = true;
  return k;
}

#define MINIFW_INSTANTIATE_CONV(T)                                                                  \
  template ConvWorkspace conv_workspace<T>(ConvAlgo, ConvDir, const ConvShape&, int);              \
  template void conv_forward<T>(ConvAlgo, const ConvShape&, const T*, const T*, const T*, T*, void*, \
                                int);                                                              \
  template void conv_backward_data<T>(ConvAlgo, const ConvShape&, const T*, const T*, T*, void*,    \
                                      int);                                                        \
  template void conv_backward_filter<T>(ConvAlgo, const ConvShape&, const T*, const T*, T*, void*,  \
                                        int);                                                      \
  template PackSource<T> channel_rows_source<T>(const ChannelMatrix<T>*);                          \
  template PackSource<T> channel_cols_source<T>(const ChannelMatrix<T>*);                          \
  template GemmKernel<T> lean_gemm_kernel<T>(int64_t);
MINIFW_INSTANTIATE_CONV(float)
MINIFW_INSTANTIATE_CONV(double)

}  // namespace minifw
