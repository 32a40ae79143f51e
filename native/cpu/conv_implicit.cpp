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
//
// The packers of the lowered operand are in conv_pack_impl.h, compiled per ISA.
#include <algorithm>
#include <vector>

#include "conv.h"
#include "conv_pack.h"

namespace minifw {
namespace {

inline int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// ---- backward-data, one phase (ah, aw) ------------------------------------------
struct Phase {
  int64_t ah, aw;                      // residues of ih, iw modulo the stride
  int64_t rows, cols;                  // input rows/cols in this phase
  std::vector<int64_t> taps_r, taps_s; // contributing kernel taps
  std::vector<int64_t> oh0, ow0;       // output row/col feeding the phase's first pixel, per tap

  PhaseView view() const {
    return {rows, cols, static_cast<int64_t>(taps_r.size()), static_cast<int64_t>(taps_s.size()),
            taps_r.data(), taps_s.data(), oh0.data(), ow0.data()};
  }
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

// A = W_g^T restricted to the phase's taps: outer = c, k = (kout, tap r, tap s).
template <typename T>
void pack_data_weights(const void* self, T* dst, int64_t outer0, int64_t outer_len, int64_t k0,
                       int64_t kc, int width) {
  const auto& src = *static_cast<const DataGather<T>*>(self);
  const ConvShape& s = *src.s;
  const PhaseView& ph = *src.phase;
  const int64_t TR = ph.ntr, TS = ph.nts, RS = s.R * s.S, Cg = s.Cg();
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
  const ConvPackers<T>& packers = select_isa_variant<ConvPackers<T>>();
  const GemmKernel<T> kern = lean_gemm_kernel<T>(s.Kg());
  const int64_t P = s.P(), CgRS = s.Cg() * s.R * s.S, Kg = s.Kg();
  for_each_group(s.groups, nthreads, [&](int64_t g, int threads) {
    StridedMatrix<T> a{w + g * Kg * CgRS, CgRS, false};
    ForwardLowered<T> b{&s, x, g * s.Cg()};
    gemm_packed<T>(Kg, s.N * P, CgRS, T(1), strided_source(&a), {packers.forward_lowered, &b}, T(0),
                   nchw_output(y, s.K, P, g * Kg), threads, &kern);
  });
}

template <typename T>
void implicit_backward_filter(const ConvShape& s, const T* x, const T* dy, T* dw, int nthreads) {
  if (dot_backward_filter_shape(s)) return dot_backward_filter(s, x, dy, dw, nthreads);
  const ConvPackers<T>& packers = select_isa_variant<ConvPackers<T>>();
  const GemmKernel<T> kern = lean_gemm_kernel<T>(s.Kg());
  const int64_t P = s.P(), CgRS = s.Cg() * s.R * s.S, Kg = s.Kg();
  for_each_group(s.groups, nthreads, [&](int64_t g, int threads) {
    ChannelMatrix<T> a{dy, P, s.K * P, g * Kg};
    ForwardLowered<T> b{&s, x, g * s.Cg()};
    gemm_packed<T>(Kg, CgRS, s.N * P, T(1), channel_rows_source(&a), {packers.filter_lowered, &b},
                   T(0), GemmOutput<T>{dw + g * Kg * CgRS, CgRS}, threads, &kern);
  });
}

template <typename T>
void implicit_backward_data(const ConvShape& s, const T* dy, const T* w, T* dx, int nthreads) {
  const ConvPackers<T>& packers = select_isa_variant<ConvPackers<T>>();
  const GemmKernel<T> kern = lean_gemm_kernel<T>(s.Cg());
  const int64_t HW = s.H * s.W, Cg = s.Cg(), Kg = s.Kg();
  for (int64_t ah = 0; ah < s.sh; ++ah) {
    for (int64_t aw = 0; aw < s.sw; ++aw) {
      const Phase ph = make_phase(s, ah, aw);
      if (ph.rows == 0 || ph.cols == 0) continue;
      const PhaseView view = ph.view();
      const int64_t taps = static_cast<int64_t>(ph.taps_r.size() * ph.taps_s.size());
      for_each_group(s.groups, nthreads, [&](int64_t g, int threads) {
        DataGather<T> src{&s, &view, dy, w, g * Kg, g * Cg};
        GemmOutput<T> out{dx + g * Cg * HW + ah * s.W + aw, HW};
        out.cols_per_row = ph.cols;
        out.rows_per_image = ph.rows;
        out.col_stride = s.sw;
        out.row_stride = s.sh * s.W;
        out.image_stride = s.C * HW;
        // taps == 0: no output pixel reads this phase; the GEMM with K = 0 writes zeros.
        gemm_packed<T>(Cg, s.N * ph.rows * ph.cols, Kg * taps, T(1), {&pack_data_weights<T>, &src},
                       {packers.data_gather, &src}, T(0), out, threads, &kern);
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
