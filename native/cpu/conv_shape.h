// The shape of a 2-D convolution problem and the names of its directions and
// algorithms: shared by the CPU kernels (conv.h) and the CUDA ones
// (cuda/conv.h), so it includes nothing CPU-specific.
#pragma once
#include <cstdint>
#include <string>

namespace minifw {

struct ConvShape {
  int64_t N, C, H, W;  // input
  int64_t K, R, S;     // filter: K x (C / groups) x R x S
  int64_t sh, sw, ph, pw, dh, dw, groups;
  int64_t Ho, Wo;      // output

  int64_t Cg() const { return C / groups; }
  int64_t Kg() const { return K / groups; }
  int64_t P() const { return Ho * Wo; }
  int64_t x_size() const { return N * C * H * W; }
  int64_t w_size() const { return K * Cg() * R * S; }
  int64_t y_size() const { return N * K * Ho * Wo; }
};

// Fills Ho/Wo; throws std::invalid_argument on any inconsistent field, so no
// kernel runs on a shape that would index out of bounds.
ConvShape make_conv_shape(int64_t N, int64_t C, int64_t H, int64_t W, int64_t K, int64_t Cg,
                          int64_t R, int64_t S, int64_t sh, int64_t sw, int64_t ph, int64_t pw,
                          int64_t dh, int64_t dw, int64_t groups);

// The direct algorithm's padded layout along one axis (rows or columns), on the CPU
// (cpu/conv_direct.cpp) and the GPU (cuda/conv.cu) alike: a source of `src` values,
// padded by `pad` at each end (cropped where pad < 0), for `taps` taps `dil` apart. Source
// index i lands at i + pad where lower <= i + pad < upper; `out` outputs; `q` is the
// layout's stride, the padding shared between neighbours: the data fits (upper), the
// last output's taps reach no further than the next row's (or image's) leading zeros
// (src + 2 pad - lower), and every output fits (out).
struct PaddedAxis {
  int64_t pad, lower, upper, out, q;
};

inline PaddedAxis padded_axis(int64_t src, int64_t pad, int64_t taps, int64_t dil) {
  PaddedAxis a;
  a.pad = pad;
  a.lower = pad > 0 ? pad : 0;
  a.upper = src + pad + (pad < 0 ? pad : 0);
  const int64_t extent = src + 2 * pad;
  a.out = extent - (taps - 1) * dil;
  a.q = a.upper;
  if (extent - a.lower > a.q) a.q = extent - a.lower;
  if (a.out > a.q) a.q = a.out;
  return a;
}

enum class ConvDir { forward, backward_data, backward_filter };
enum class ConvAlgo { im2col_gemm, implicit_gemm, winograd, gemm_1x1, direct, depthwise };

ConvDir parse_conv_dir(const std::string& name);
ConvAlgo parse_conv_algo(const std::string& name);
bool conv_algo_supports(ConvAlgo algo, ConvDir dir, const ConvShape& s);

}  // namespace minifw
