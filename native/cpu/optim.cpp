// The fused SGD step: a plain loop the compiler vectorizes at the baseline ISA.
// It is memory bound (five streams of n elements, two of them written): on 61 M
// floats over two threads it moves ~33 GB/s at the baseline, and the same loop
// built for AVX2 or AVX-512 was at most ~15% faster, so it has no ISA variants.
// The flags are template parameters, so the loop of each combination holds only its
// own arithmetic.
#include "optim.h"

#include "split_work.h"

namespace minifw {
namespace {

enum class Momentum { none, first_step, later_step };

template <typename T>
struct SgdCoefficients {
  T lr, sign, momentum, keep, weight_decay;  // sign: -1 to maximize; keep = 1 - dampening
};

// The operations and their order are those of the NumPy formulation (weight_decay * p
// + g, momentum * buf + (1 - dampening) * g', p - lr * d), so both round alike where
// the compiler forms no FMAs (x86-64's baseline has none).
template <typename T, bool Decay, Momentum M, bool Nesterov>
void sgd_range(int64_t begin, int64_t end, T* __restrict p, const T* __restrict g, T* __restrict buf,
               SgdCoefficients<T> c) {
  for (int64_t i = begin; i < end; ++i) {
    T d = c.sign * g[i];  // exact: multiplying by +-1 only flips the sign
    if (Decay) d = c.weight_decay * p[i] + d;
    if (M != Momentum::none) {
      const T b = M == Momentum::first_step ? d : c.momentum * buf[i] + c.keep * d;
      buf[i] = b;
      d = Nesterov ? d + c.momentum * b : b;
    }
    p[i] = p[i] - c.lr * d;
  }
}

template <typename T>
using SgdRange = void (*)(int64_t, int64_t, T*, const T*, T*, SgdCoefficients<T>);

// weight_decay == 0 skips the decay term rather than adding 0 * p, which is NaN where p is inf.
template <typename T, bool Decay>
SgdRange<T> sgd_variant(bool momentum, bool nesterov, bool first_step) {
  if (!momentum) return &sgd_range<T, Decay, Momentum::none, false>;
  if (first_step)
    return nesterov ? &sgd_range<T, Decay, Momentum::first_step, true>
                    : &sgd_range<T, Decay, Momentum::first_step, false>;
  return nesterov ? &sgd_range<T, Decay, Momentum::later_step, true>
                  : &sgd_range<T, Decay, Momentum::later_step, false>;
}

}  // namespace

template <typename T>
void sgd_step(int64_t n, T* p, const T* g, T* buf, T lr, T momentum, T keep, T weight_decay,
              bool nesterov, bool maximize, bool first_step, int nthreads) {
  const bool use_momentum = buf != nullptr;
  const SgdRange<T> range = weight_decay != T(0) ? sgd_variant<T, true>(use_momentum, nesterov, first_step)
                                                 : sgd_variant<T, false>(use_momentum, nesterov, first_step);
  const SgdCoefficients<T> c{lr, maximize ? T(-1) : T(1), momentum, keep, weight_decay};
  for_each_range(n, nthreads, kParallelGrain, [&](int64_t b, int64_t e) { range(b, e, p, g, buf, c); });
}

#define MINIFW_OPTIM_INSTANTIATE(T) \
  template void sgd_step<T>(int64_t, T*, const T*, T*, T, T, T, T, bool, bool, bool, int);
MINIFW_OPTIM_INSTANTIATE(float)
MINIFW_OPTIM_INSTANTIATE(double)
#undef MINIFW_OPTIM_INSTANTIATE
}  // namespace minifw
