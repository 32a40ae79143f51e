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

// The backward-filter's tile: c[i * nr + j] = sum_{t < n} rows[i][t] * bt[t * nr + j] for
// i < mr: mr (channel, tap) pairs, whose values are the padded input shifted by the tap
// (rows[i], broadcast one at a time), by nr output channels of dY transposed (bt: nr
// output channels for each position, one row of two vectors per position).
template <typename T>
using DirectFilterFn = void (*)(int64_t n, const T* const* rows, const T* bt, T* c);

template <typename T>
struct DirectKernels {
  static constexpr int kMaxRows = 14;
  static constexpr int kMaxCols = 32;
  int nr;                                // columns of a tile: two vectors
  int mr_max;                            // most rows of a tile the ISA's registers hold
  DirectTileFn<T> tile[kMaxRows + 1];    // tile[mr] for 1 <= mr <= mr_max
  DirectFilterFn<T> filter[kMaxRows + 1];  // filter[mr] for 1 <= mr <= mr_max
};

MINIFW_DECLARE_ISA_VARIANTS(DirectKernels<float>);
MINIFW_DECLARE_ISA_VARIANTS(DirectKernels<double>);

}  // namespace minifw
