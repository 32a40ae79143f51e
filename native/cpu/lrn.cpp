// LRN: the generic variant of the block kernels, the choice among the ISA
// variants and the split over threads.
#include "lrn.h"

#include <algorithm>
#include <vector>

#include "lrn_impl.h"
#include "split_work.h"

namespace minifw {
namespace {
// fn(offset, B, scratch) for every block of positions of every image, in
// parallel over (image, block) pairs.
template <typename F>
void for_each_block(const LrnShape& s, int nthreads, F&& fn) {
  const int64_t blocks = (s.HW + kLrnBlock - 1) / kLrnBlock;
  const int64_t cost = s.C * std::min(s.HW, kLrnBlock) * 4;
  for_each_range(s.N * blocks, nthreads, grain_for(cost), [&](int64_t b, int64_t e) {
    std::vector<double> scratch(kLrnScratchBytes / sizeof(double));
    for (int64_t item = b; item < e; ++item) {
      const int64_t n = item / blocks, p0 = (item % blocks) * kLrnBlock;
      fn(n * s.C * s.HW + p0, std::min(kLrnBlock, s.HW - p0), scratch.data());
    }
  });
}
}  // namespace

MINIFW_ISA_VARIANT(LrnKernels<float>, generic, make_lrn_kernels<float, Isa::generic>())
MINIFW_ISA_VARIANT(LrnKernels<double>, generic, make_lrn_kernels<double, Isa::generic>())

template <typename T>
void lrn_forward(const LrnShape& s, const T* x, T* y, T* scale, int nthreads) {
  const LrnKernels<T>& k = select_isa_variant<LrnKernels<T>>();
  for_each_block(s, nthreads, [&](int64_t off, int64_t B, void* scratch) {
    k.forward_block(s, x + off, y + off, scale + off, B, scratch);
  });
}

template <typename T>
void lrn_backward(const LrnShape& s, const T* dy, const T* x, const T* y, const T* scale, T* dx, int nthreads) {
  const LrnKernels<T>& k = select_isa_variant<LrnKernels<T>>();
  for_each_block(s, nthreads, [&](int64_t off, int64_t B, void* scratch) {
    k.backward_block(s, dy + off, x + off, y + off, scale + off, dx + off, B, scratch);
  });
}

template void lrn_forward<float>(const LrnShape&, const float*, float*, float*, int);
template void lrn_forward<double>(const LrnShape&, const double*, double*, double*, int);
template void lrn_backward<float>(const LrnShape&, const float*, const float*, const float*, const float*, float*,
                                  int);
template void lrn_backward<double>(const LrnShape&, const double*, const double*, const double*, const double*,
                                   double*, int);
}  // namespace minifw
