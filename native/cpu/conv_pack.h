// The implicit-GEMM convolution's packers of the lowered operand (conv_implicit.cpp):
// they form the GEMM's B panels straight from the input tensor (forward, backward-
// filter) or from dY (backward-data). Packing is most of the time of a convolution with
// few output channels (AlexNetSmall conv2: 32 per group, so each packed value feeds only
// 32 multiply-adds), so the packers are compiled once per ISA (conv_pack.cpp,
// conv_pack_avx2.cpp, conv_pack_avx512.cpp, all from conv_pack_impl.h) and chosen with
// select_isa_variant: under AVX-512 a run of up to 16 floats, cut at the image's edge,
// is one masked load and store.
#pragma once
#include <cstdint>

#include "conv_shape.h"
#include "isa_dispatch.h"

namespace minifw {

// B of the forward (outer = (n, oh, ow), k = (c, r, s)) and of the backward-filter
// (outer = (c, r, s), k = (n, oh, ow)): the lowered input of group channels from c0.
template <typename T>
struct ForwardLowered {
  const ConvShape* s;
  const T* x;
  int64_t c0;
};

// One phase (ah, aw) of the backward-data: the input pixels with ih = ah, iw = aw modulo
// the stride, the kernel taps that reach them, and the output row/column feeding the
// phase's first pixel through each tap (arrays of ntr and nts values).
struct PhaseView {
  int64_t rows, cols, ntr, nts;
  const int64_t *taps_r, *taps_s, *oh0, *ow0;
};

// A and B of one phase of the backward-data: W_g^T restricted to the phase's taps, and
// dY gathered (outer = (n, u, v) over the phase's pixels, k = (kout, tap r, tap s)).
template <typename T>
struct DataGather {
  const ConvShape* s;
  const PhaseView* phase;
  const T* dy;     // B source
  const T* w;      // A source
  int64_t k0, c0;  // first output / input channel of the group
};

template <typename T>
using PackFn = void (*)(const void* self, T* dst, int64_t outer0, int64_t outer_len, int64_t k0, int64_t kc,
                        int width);

template <typename T>
struct ConvPackers {
  PackFn<T> forward_lowered;  // self: ForwardLowered<T>
  PackFn<T> filter_lowered;   // self: ForwardLowered<T>
  PackFn<T> data_gather;      // self: DataGather<T>
};

MINIFW_DECLARE_ISA_VARIANTS(ConvPackers<float>);
MINIFW_DECLARE_ISA_VARIANTS(ConvPackers<double>);

}  // namespace minifw
