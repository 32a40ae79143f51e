// Elementwise transcendental functions over arrays, one implementation per
// ISA: the exp / log / pow inside softmax, sigmoid, tanh, elu and LRN are what
// keeps those memory-bound primitives from reaching memory speed when computed
// one element at a time with libm.
//
// The AVX2 and AVX-512 versions (vecmath_avx2.cpp, vecmath_avx512.cpp) share
// one set of algorithms (vecmath_impl.h) written over a small SIMD traits
// struct; the portable version calls libm. All are accurate to a few ulp of
// the type, so float32 results match a float64 reference within float32
// rounding. Every function accepts y == x (in place).
#pragma once
#include <cstdint>

#include "isa_dispatch.h"

namespace minifw {

template <typename T>
struct VecMath {
  void (*exp)(const T* x, T* y, int64_t n);                    // y = exp(x)
  T (*exp_shift_sum)(const T* x, T shift, T* y, int64_t n);    // y = exp(x - shift); returns sum(y)
  void (*exp_sub)(const T* x, const T* m, T* y, int64_t n);    // y = exp(x - m), m an array
  void (*log)(const T* x, T* y, int64_t n);                    // y = log(x)
  void (*sigmoid)(const T* x, T* y, int64_t n);                // y = 1 / (1 + exp(-x))
  void (*tanh)(const T* x, T* y, int64_t n);
  void (*elu)(const T* x, T* y, int64_t n, T alpha);           // y = x > 0 ? x : alpha * (exp(x) - 1)
  void (*pow_neg)(const T* s, T* y, int64_t n, T beta);        // y = s ^ (-beta), s > 0
  T (*max)(const T* x, int64_t n);                             // max(x), n >= 1 (NaN: any value or NaN)
  void (*scale)(const T* x, T* y, int64_t n, T a);             // y = a * x
  void (*softmax_grad)(const T* dy, const T* y, T* dx, int64_t n);  // dx = y * (dy - <dy, y>)
  const char* name;
};

// One table per ISA (isa_dispatch.h); kernels compiled for an ISA take that
// ISA's table by isa_variant<VecMath<T>, isa>().
MINIFW_DECLARE_ISA_VARIANTS(VecMath<float>);
MINIFW_DECLARE_ISA_VARIANTS(VecMath<double>);

// The active ISA's table, for callers in portable code.
template <typename T>
inline const VecMath<T>& vecmath() {
  return select_isa_variant<VecMath<T>>();
}

// Rows of values processed together by kernels that stage a transcendental
// through a small buffer: small enough for L1, long enough to amortize calls.
constexpr int64_t kVecChunk = 512;

}  // namespace minifw
