// Pooling: shape rules, the generic variant of the plane kernels, the forward
// through the active ISA's variant, and the backward passes (scatters into a
// zeroed plane that stays in L1/L2).
#include "pooling.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "pooling_impl.h"
#include "split_work.h"

namespace minifw {

namespace {
// Windows along one axis: k taps d apart, moved by s over size elements padded
// by p; < 1 when none fits. With ceil_mode a window may overhang the padded
// input's end (PyTorch's rule), so the span may be negative.
int64_t out_size(int64_t size, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
  // d (k - 1) + 1 > size + 2p + s - 1 leaves no window; by a division, as the product may not fit
  if (k - 1 > (size + 2 * p + s) / d) return 0;
  const int64_t span = size + 2 * p - d * (k - 1) - 1;
  const int64_t numerator = ceil_mode ? span + s - 1 : span;
  int64_t out = (numerator >= 0 ? numerator / s : -((-numerator + s - 1) / s)) + 1;  // floor division
  // PyTorch: with ceil_mode the last window must start inside the input or the left padding.
  if (ceil_mode && out > 0 && (out - 1) * s >= size + p) --out;
  return out;
}

// Whether some window along one axis holds no input element. Every window
// starts before `size`, so only one starting in the left padding can miss the
// input, by stepping over it: its first tap at or past 0 lies at or past size
// (which takes d > size).
bool has_empty_window(int64_t size, int64_t s, int64_t p, int64_t d, int64_t out) {
  if (d <= size) return false;
  for (int64_t o = 0; o < out && o * s < p; ++o) {
    const int64_t start = o * s - p;
    if (start + (-start + d - 1) / d * d >= size) return true;
  }
  return false;
}
}  // namespace

PoolShape make_pool_shape(int64_t N, int64_t C, int64_t H, int64_t W, int64_t kh, int64_t kw, int64_t sh,
                          int64_t sw, int64_t ph, int64_t pw, int64_t dh, int64_t dw, bool ceil_mode) {
  auto fail = [](const std::string& what) { throw std::invalid_argument("pooling: " + what); };
  if (N < 1 || C < 1 || H < 1 || W < 1) fail("every dimension of x must be >= 1");
  if (kh < 1 || kw < 1 || sh < 1 || sw < 1) fail("kernel and stride must be >= 1");
  if (dh < 1 || dw < 1 || dh > (int64_t(1) << 30) || dw > (int64_t(1) << 30)) fail("dilation must be in [1, 2^30]");
  if (ph < 0 || pw < 0 || 2 * ph > kh || 2 * pw > kw) fail("padding must be in [0, kernel / 2]");
  if (H * W >= (int64_t(1) << 31) || N * C * H * W >= (int64_t(1) << 62)) fail("input too large");
  PoolShape s{N, C, H, W, kh, kw, sh, sw, ph, pw, dh, dw, 0, 0};
  s.Ho = out_size(H, kh, sh, ph, dh, ceil_mode);
  s.Wo = out_size(W, kw, sw, pw, dw, ceil_mode);
  if (s.Ho < 1 || s.Wo < 1) fail("the (dilated) kernel is larger than the padded input: no output");
  if (has_empty_window(H, sh, ph, dh, s.Ho) || has_empty_window(W, sw, pw, dw, s.Wo))
    fail("a dilated window holds no input element (every tap lands in the padding)");
  return s;
}

int64_t pool_scratch_bytes(const PoolShape& s) { return (s.Wo + s.W) * 16 + 64; }

namespace {
// fn(plane, scratch) for every (n, c) plane, planes split over threads.
template <typename F>
void for_each_plane(const PoolShape& s, int nthreads, F&& fn) {
  const int64_t cost = s.H * s.W + s.Ho * s.Wo;
  for_each_range(s.planes(), nthreads, grain_for(cost), [&](int64_t b, int64_t e) {
    std::vector<unsigned char> scratch(static_cast<size_t>(pool_scratch_bytes(s)));
    for (int64_t q = b; q < e; ++q) fn(q, scratch.data());
  });
}
}  // namespace

MINIFW_ISA_VARIANT(PoolKernels<float>, generic, make_pool_kernels<float>())
MINIFW_ISA_VARIANT(PoolKernels<double>, generic, make_pool_kernels<double>())

template <typename T>
void pool_forward(const PoolShape& s, PoolMode mode, const T* x, T* y, int64_t* indices, int nthreads) {
  const PoolKernels<T>& k = select_isa_variant<PoolKernels<T>>();
  const int64_t in = s.H * s.W, out = s.Ho * s.Wo;
  for_each_plane(s, nthreads, [&](int64_t q, void* scratch) {
    if (mode == PoolMode::max)
      k.max_plane(s, x + q * in, y + q * out, indices ? indices + q * out : nullptr, scratch);
    else
      k.avg_plane(s, mode == PoolMode::avg_include_pad, x + q * in, y + q * out, scratch);
  });
}

template <typename T>
int64_t pool_backward(const PoolShape& s, PoolMode mode, const T* dy, const int64_t* indices, T* dx,
                      int nthreads) {
  const int64_t in = s.H * s.W, out = s.Ho * s.Wo;
  std::atomic<int64_t> bad{-1};
  for_each_plane(s, nthreads, [&](int64_t q, void* scratch) {
    T* d = dx + q * in;
    const T* g = dy + q * out;
    std::memset(d, 0, sizeof(T) * in);
    if (mode == PoolMode::max) {
      const int64_t* idx = indices + q * out;
      for (int64_t o = 0; o < out; ++o) {
        const uint64_t k = static_cast<uint64_t>(idx[o]);
        if (k < static_cast<uint64_t>(in)) {
          d[k] += g[o];
        } else {  // an index from elsewhere: skip the write, report it
          int64_t cur = bad.load();
          const int64_t pos = q * out + o;
          while ((cur < 0 || pos < cur) && !bad.compare_exchange_weak(cur, pos)) {
          }
        }
      }
      return;
    }
    // Average: a window is a row range times a column range, so each output
    // row's shares are first spread along one input row, tap by tap (adds
    // that do not depend on each other), and that row is then added to the
    // kh input rows the windows cover (vectorized).
    const bool include_pad = mode == PoolMode::avg_include_pad;
    T* spread = static_cast<T*>(scratch);
    T* share = spread + s.W;
    for (int64_t oh = 0; oh < s.Ho; ++oh) {
      const int64_t h0 = oh * s.sh - s.ph;
      const int64_t hs = lo_clip(h0, 0), he = hi_clip(h0 + s.kh, s.H);
      const int64_t rows = include_pad ? hi_clip(h0 + s.kh, s.H + s.ph) - h0 : he - hs;
      for (int64_t ow = 0; ow < s.Wo; ++ow) {
        const int64_t w0 = ow * s.sw - s.pw;
        const int64_t cols = include_pad ? hi_clip(w0 + s.kw, s.W + s.pw) - w0
                                         : hi_clip(w0 + s.kw, s.W) - lo_clip(w0, 0);
        share[ow] = g[oh * s.Wo + ow] / (static_cast<T>(rows) * static_cast<T>(cols));
      }
      for (int64_t c = 0; c < s.W; ++c) spread[c] = T(0);
      // Only taps that land in the row for some output: t in [pw - (Wo - 1) * sw, W + pw), at most
      // 2 W of them however wide a heavily padded window is.
      const int64_t t_end = std::min(s.kw, s.W + s.pw);
      for (int64_t t = std::max<int64_t>(0, s.pw - (s.Wo - 1) * s.sw); t < t_end; ++t) {
        // outputs whose tap t lands inside the row: 0 <= ow * sw - pw + t < W
        const int64_t first = t >= s.pw ? 0 : (s.pw - t + s.sw - 1) / s.sw;
        const int64_t last = hi_clip(s.Wo, (s.W - 1 + s.pw - t) / s.sw + 1);
        for (int64_t ow = first; ow < last; ++ow) spread[ow * s.sw - s.pw + t] += share[ow];
      }
      for (int64_t r = hs; r < he; ++r) {
        T* drow = d + r * s.W;
        for (int64_t c = 0; c < s.W; ++c) drow[c] += spread[c];
      }
    }
  });
  return bad.load();
}

template void pool_forward<float>(const PoolShape&, PoolMode, const float*, float*, int64_t*, int);
template void pool_forward<double>(const PoolShape&, PoolMode, const double*, double*, int64_t*, int);
template int64_t pool_backward<float>(const PoolShape&, PoolMode, const float*, const int64_t*, float*, int);
template int64_t pool_backward<double>(const PoolShape&, PoolMode, const double*, const int64_t*, double*, int);
}  // namespace minifw
