// The implicit GEMM's packers (conv_pack_impl.h), compiled for AVX-512: a run of up to 16
// floats, cut at the image's edge or not, is one masked load and store, and the
// backward-filter's transpose goes by 16 x 16 blocks in registers.
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

// r[i] (i < 8) = rows i and i + 8 of a 16 x 8 block in its two 256-bit halves; on return
// r[j] = column j (rows 0 .. 15).
inline void transpose8x8_pairs(__m512 r[8]) {
  __m512 a[8], b[8];
  for (int k = 0; k < 4; ++k) {
    a[2 * k] = _mm512_unpacklo_ps(r[2 * k], r[2 * k + 1]);
    a[2 * k + 1] = _mm512_unpackhi_ps(r[2 * k], r[2 * k + 1]);
  }
  for (int k = 0; k < 2; ++k) {  // 128-bit lane L of b[4k + m]: column m (L even) or 4 + m of rows 4k .. 4k + 3
    b[4 * k] = _mm512_shuffle_ps(a[4 * k], a[4 * k + 2], 0x44);
    b[4 * k + 1] = _mm512_shuffle_ps(a[4 * k], a[4 * k + 2], 0xEE);
    b[4 * k + 2] = _mm512_shuffle_ps(a[4 * k + 1], a[4 * k + 3], 0x44);
    b[4 * k + 3] = _mm512_shuffle_ps(a[4 * k + 1], a[4 * k + 3], 0xEE);
  }
  // column m: lanes 0 and 2 of b[m] (rows 0-3, 8-11) and of b[4 + m] (rows 4-7, 12-15)
  const __m512i even = _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27);
  const __m512i odd = _mm512_setr_epi32(4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31);
  for (int m = 0; m < 4; ++m) {
    r[m] = _mm512_permutex2var_ps(b[m], even, b[4 + m]);
    r[4 + m] = _mm512_permutex2var_ps(b[m], odd, b[4 + m]);
  }
}

struct Avx512FloatRuns : SimdRuns<F32x16> {
  // dst[0, len) = src[0, len): 16 values a move, then 8, then a masked move (LeNet conv2's
  // rows of 8 took a masked move each).
  static void copy(float* __restrict dst, const float* __restrict src, int64_t len) {
    int64_t t = 0;
    for (; t + 16 <= len; t += 16) _mm512_storeu_ps(dst + t, _mm512_loadu_ps(src + t));
    if (t + 8 <= len) {
      _mm256_storeu_ps(dst + t, _mm256_loadu_ps(src + t));
      t += 8;
    }
    if (t < len) F32x16::store_n(dst + t, F32x16::load_n(src + t, len - t), len - t);
  }

  // dst[t] = src[first + t] for t in [0, len) where 0 <= first + t < limit, zero elsewhere:
  // per 16 values, the part inside [0, limit) loaded (no address outside it is formed),
  // expanded into its lanes, and stored with the zeros around it in one store.
  static void clip_copy(float* dst, const float* src, int64_t first, int64_t len, int64_t limit) {
    const int64_t lo = imin(len, imax(0, -first)), hi = imax(lo, imin(len, limit - first));
    for (int64_t c0 = 0; c0 < len; c0 += 16) {
      const int64_t n = imin(16, len - c0), a = imax(lo, c0), b = imin(hi, c0 + n);
      __m512 v = _mm512_setzero_ps();
      if (b > a) {
        v = _mm512_maskz_loadu_ps(F32x16::tail_mask(b - a), src + first + a);
        if (a > c0)
          v = _mm512_maskz_expand_ps(static_cast<__mmask16>(F32x16::tail_mask(b - c0) & ~F32x16::tail_mask(a - c0)), v);
      }
      _mm512_mask_storeu_ps(dst + c0, F32x16::tail_mask(n), v);
    }
  }

  // dst[t] = src[t * step] for t < len: 16 values a gather (AlexNet conv1's stride of 4: one
  // load and store per value took a sixth of its forward). The rows' strides fit int32 lanes
  // (the bindings bound every size).
  static void strided(float* dst, const float* src, int64_t step, int64_t len) {
    if (step > (int64_t(1) << 26)) return strided_by_values(dst, src, step, len);
    const __m512i offsets = F32x16::iota_times(static_cast<int32_t>(step));
    for (int64_t t = 0; t < len; t += 16) {
      const int64_t n = imin(16, len - t);
      F32x16::store_n(dst + t, F32x16::gather_n(src + t * step, offsets, n), n);
    }
  }

  // dst[u * width + t] = src[off[t] + u] for t < w, u < run (see transpose_runs): up to 16
  // sources loaded (masked to the run), transposed, and stored as up to 16 packed rows.
  static void transpose(float* dst, int width, const float* src, const int64_t* off, int64_t w, int64_t run) {
    transpose_blocks(dst, width, w, run, [&](int64_t t, int64_t u0, int64_t nu) {
      return _mm512_maskz_loadu_ps(F32x16::tail_mask(nu), src + off[t] + u0);
    });
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
    transpose_blocks(dst, width, w, run, [&](int64_t t, int64_t u0, int64_t nu) {
      const int64_t ih = ih0 + dr[t], first = iw0 + ds[t] + u0;
      const int64_t lo = imax(0, -first), hi = imin(nu, W - first);
      if (ih < 0 || ih >= H || hi <= lo) return _mm512_setzero_ps();
      const float* src = plane + (off[t] - dr[t] * W - ds[t]) + ih * W + first + lo;
      const __m512 v = _mm512_maskz_loadu_ps(F32x16::tail_mask(hi - lo), src);
      return lo == 0 ? v
                     : _mm512_maskz_expand_ps(static_cast<__mmask16>(F32x16::tail_mask(hi) & ~F32x16::tail_mask(lo)), v);
    });
  }

 private:
  // dst[(u0 + j) * width + t] = lane j of load_row(t, u0, nu) for t < w, j < nu, over blocks
  // of 16 t's and 16 u's; load_row gives lanes [0, nu) and zeros above. A block of 8 u's or
  // fewer (LeNet conv2's rows of 8 outputs, AlexNetSmall's of 8) is transposed as two 8 x 8
  // blocks side by side: half the shuffles of a 16 x 16 block whose other half is zeros.
  template <typename LoadRow>
  static void transpose_blocks(float* dst, int width, int64_t w, int64_t run, LoadRow load_row) {
    __m512 r[16];
    for (int64_t u0 = 0; u0 < run; u0 += 16) {
      const int64_t nu = imin(16, run - u0);
      for (int64_t t0 = 0; t0 < w; t0 += 16) {
        const int64_t nt = imin(16, w - t0);
        if (nu <= 8) {
          for (int64_t i = 0; i < 8; ++i) {
            const __m512 lo = i < nt ? load_row(t0 + i, u0, nu) : _mm512_setzero_ps();
            const __m512 hi = i + 8 < nt ? load_row(t0 + i + 8, u0, nu) : _mm512_setzero_ps();
            r[i] = _mm512_insertf32x8(lo, _mm512_castps512_ps256(hi), 1);
          }
          transpose8x8_pairs(r);
        } else {
          for (int64_t i = 0; i < 16; ++i) r[i] = i < nt ? load_row(t0 + i, u0, nu) : _mm512_setzero_ps();
          transpose16x16(r);
        }
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
