// The direct convolution's register-blocked tile (conv_direct.cpp holds the algorithm),
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

// The backward-filter's tile: dot products over n positions (a multiple of the vector
// width) of mb rows of dY (lda apart) with nb taps of one input channel (b + toff[t]),
// held lane by lane and added into partial[(t * mb + i) * lanes + l]; the lanes are
// summed once, after the last chunk of positions.
template <typename T>
using DirectFilterFn = void (*)(int64_t n, const T* a, int64_t lda, const T* b, const int64_t* toff,
                                T* partial);

template <typename T>
struct DirectKernels {
  static constexpr int kMaxRows = 14;
  static constexpr int kMaxCols = 32;
  static constexpr int kMaxFilterRows = 4;
  static constexpr int kMaxFilterTaps = 6;
  int nr;                              // columns of a tile: two vectors
  int mr_max;                          // most rows of a tile the ISA's registers hold
  DirectTileFn<T> tile[kMaxRows + 1];  // tile[mr] for 1 <= mr <= mr_max
  int lanes;                           // values per vector
  int filter_taps;                     // most taps of a filter tile (rows: kMaxFilterRows)
  DirectFilterFn<T> filter[kMaxFilterRows + 1][kMaxFilterTaps + 1];  // [mb][nb], from 1
};

MINIFW_DECLARE_ISA_VARIANTS(DirectKernels<float>);
MINIFW_DECLARE_ISA_VARIANTS(DirectKernels<double>);

}  // namespace minifw
