// The direct convolution's register-blocked tiles (conv_direct.cpp holds the algorithm),
// compiled once per ISA from conv_direct_impl.h and chosen with select_isa_variant.
#pragma once
#include <cstdint>

#include "isa_dispatch.h"

namespace minifw {

// c[i * nr + j] = sum_k a[k * mr + i] * b[koff[k] + j] for i < mr, j < nr: mr output
// channels by nr consecutive positions of the padded input's flat index. Row k of the
// operand B is the padded input itself, shifted by koff[k] (channel and tap), so B is
// read in place and never packed.
template <typename T>
using DirectTileFn = void (*)(int64_t kdim, const T* a, const T* b, const int64_t* koff, T* c);

// The backward-filter's tile: c[i * nr + j] = sum over s < segs, t < len of
// rows[i][seg[s] + t] * bt[(s * len + t) * nr + j] for i < mr: mr (channel, tap) pairs,
// whose values are the padded input shifted by the tap (rows[i], broadcast one at a
// time), by nr output channels of dY transposed (bt: nr output channels for each
// position, one row of two vectors per position), over `segs` output rows of `len`
// positions each, at seg[s] in the padded layout and one after another in bt.
template <typename T>
using DirectFilterFn = void (*)(int64_t segs, int64_t len, const int64_t* seg, const T* const* rows, const T* bt,
                                T* c);

// The row tile: out[ch * plane + i] = sum_k x[koff[k] + i] * b[k * cols + ch] (+ bias[ch]
// where bias is not null) for i < mr consecutive output positions of one output row and
// ch < cols output channels (cols: one, two or three vectors), b the packed weights of those
// channels. Output channels lie along the vectors, so no position is computed that is
// not an output.
template <typename T>
using DirectRowTileFn = void (*)(int64_t kdim, const T* x, const int64_t* koff, const T* b, const T* bias, T* out,
                                 int64_t plane);

template <typename T>
struct DirectKernels {
  static constexpr int kMaxRows = 14;
  static constexpr int kMaxCols = 32;
  int nr;                                // columns of a tile: two vectors
  int mr_max;                            // most rows of a tile the ISA's registers hold
  DirectTileFn<T> tile[kMaxRows + 1];    // tile[mr] for 1 <= mr <= mr_max
  DirectFilterFn<T> filter[kMaxRows + 1];  // filter[mr] for 1 <= mr <= mr_max
  DirectRowTileFn<T> row2[kMaxRows + 1];     // row tiles of two vectors: row2[mr], mr <= mr_max
  DirectRowTileFn<T> row1[2 * kMaxRows + 1];  // of one vector: row1[mr], mr <= 2 mr_max
  DirectRowTileFn<T> row3[kMaxRows + 1];      // of three vectors: row3[mr], mr <= (2 mr_max - 2) / 3
};

MINIFW_DECLARE_ISA_VARIANTS(DirectKernels<float>);
MINIFW_DECLARE_ISA_VARIANTS(DirectKernels<double>);

}  // namespace minifw
