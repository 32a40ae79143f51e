// The implicit GEMM's packers (conv_pack_impl.h), compiled for AVX-512: a run of up to 16
// floats is one masked load and store, and the backward-filter's transpose goes by 16 x 16
// blocks in registers.
#include "conv_pack_impl.h"
#include "simd_avx512.h"

namespace minifw {
namespace {

// r[i] = row i of a 16 x 16 block; on return r[j] = column j.
inline void transpose16x16(__m512 r[16]) {
  __m512 a[16], b[16];
  for (int k = 0; k < 8; ++k) {  // pairs of rows, interleaved within each 128-bit lane
    a[2 * k] = _mm512_unpacklo_ps(r[2 * k], r[2 * k + 1]);
    a[2 * k + 1] = _mm512_unpackhi_ps(r[2 * k], r[2 * k + 1]);
  }
  for (int k = 0; k < 4; ++k) {  // lane L of b[4k + m]: column 4L + m of rows 4k .. 4k + 3
    const __m512d a0 = _mm512_castps_pd(a[4 * k]), a1 = _mm512_castps_pd(a[4 * k + 1]);
    const __m512d a2 = _mm512_castps_pd(a[4 * k + 2]), a3 = _mm512_castps_pd(a[4 * k + 3]);
    b[4 * k] = _mm512_castpd_ps(_mm512_unpacklo_pd(a0, a2));
    b[4 * k + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a0, a2));
    b[4 * k + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(a1, a3));
    b[4 * k + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(a1, a3));
  }
  for (int m = 0; m < 4; ++m) {  // gather lane L of b[m], b[4 + m], b[8 + m], b[12 + m]
    const __m512 e0 = _mm512_shuffle_f32x4(b[m], b[4 + m], 0x44), e1 = _mm512_shuffle_f32x4(b[m], b[4 + m], 0xEE);
    const __m512 f0 = _mm512_shuffle_f32x4(b[8 + m], b[12 + m], 0x44);
    const __m512 f1 = _mm512_shuffle_f32x4(b[8 + m], b[12 + m], 0xEE);
    r[m] = _mm512_shuffle_f32x4(e0, f0, 0x88);
    r[4 + m] = _mm512_shuffle_f32x4(e0, f0, 0xDD);
    r[8 + m] = _mm512_shuffle_f32x4(e1, f1, 0x88);
    r[12 + m] = _mm512_shuffle_f32x4(e1, f1, 0xDD);
  }
}

struct Avx512FloatRuns : SimdRuns<F32x16> {
  // dst[u * width + t] = src[off[t] + u] for t < w, u < run (see transpose_runs): up to 16
  // sources loaded (masked to the run), transposed, and stored as up to 16 packed rows.
  static void transpose(float* dst, int width, const float* src, const int64_t* off, int64_t w, int64_t run) {
    __m512 r[16];
    for (int64_t u0 = 0; u0 < run; u0 += 16) {
      const int64_t nu = imin(16, run - u0);
      const __mmask16 load_mask = F32x16::tail_mask(nu);
      for (int64_t t0 = 0; t0 < w; t0 += 16) {
        const int64_t nt = imin(16, w - t0);
        for (int64_t i = 0; i < 16; ++i)
          r[i] = i < nt ? _mm512_maskz_loadu_ps(load_mask, src + off[t0 + i] + u0) : _mm512_setzero_ps();
        transpose16x16(r);
        const __mmask16 store_mask = F32x16::tail_mask(nt);
        for (int64_t j = 0; j < nu; ++j) _mm512_mask_storeu_ps(dst + (u0 + j) * width + t0, store_mask, r[j]);
      }
    }
  }

  // The same for every run of k's at stride 1, the image's edges included: packed column t
  // is tap (c, dr[t], ds[t]) (off[t] = c * H * W + dr[t] * W + ds[t]), and k = u is the
  // output pixel whose window starts at (ih0, iw0 + u). A tap's row outside the image gives
  // zeros; within the row, the source columns in [0, W) are loaded (no address outside the
  // row is formed) and expanded into their lanes, zeros in the others.
  static constexpr bool clipped_transpose = true;
  static void transpose_clipped(float* dst, int width, const float* plane, int64_t ih0, int64_t iw0,
                                const int64_t* off, const int64_t* dr, const int64_t* ds, int64_t w,
                                int64_t run, int64_t H, int64_t W) {
    __m512 r[16];
    for (int64_t u0 = 0; u0 < run; u0 += 16) {
      const int64_t nu = imin(16, run - u0);
      for (int64_t t0 = 0; t0 < w; t0 += 16) {
        const int64_t nt = imin(16, w - t0);
        for (int64_t i = 0; i < 16; ++i) {
          r[i] = _mm512_setzero_ps();
          if (i >= nt) continue;
          const int64_t t = t0 + i, ih = ih0 + dr[t], first = iw0 + ds[t] + u0;
          const int64_t lo = imax(0, -first), hi = imin(nu, W - first);
          if (ih < 0 || ih >= H || hi <= lo) continue;
          const float* src = plane + (off[t] - dr[t] * W - ds[t]) + ih * W + first + lo;
          const __m512 v = _mm512_maskz_loadu_ps(F32x16::tail_mask(hi - lo), src);
          r[i] = lo == 0 ? v : _mm512_maskz_expand_ps(static_cast<__mmask16>(F32x16::tail_mask(hi) &
                                                                            ~F32x16::tail_mask(lo)), v);
        }
        transpose16x16(r);
        const __mmask16 store_mask = F32x16::tail_mask(nt);
        for (int64_t j = 0; j < nu; ++j) _mm512_mask_storeu_ps(dst + (u0 + j) * width + t0, store_mask, r[j]);
      }
    }
  }
};

}  // namespace

MINIFW_ISA_VARIANT(ConvPackers<float>, avx512, (make_conv_packers<float, Avx512FloatRuns>()))
MINIFW_ISA_VARIANT(ConvPackers<double>, avx512, (make_conv_packers<double, SimdRuns<F64x8>>()))
}  // namespace minifw
