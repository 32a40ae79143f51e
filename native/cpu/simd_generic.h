// Portable SIMD traits: GCC/Clang vector extensions of 16 bytes, which every x86-64
// (SSE2) and most other targets run natively. The generic variants of the
// register-blocked kernels (the GEMM's micro-kernel, the direct convolution's tile) are
// written over them; the same operations as F32x8 / F32x16 in simd_avx2.h /
// simd_avx512.h, as far as those kernels use them. Everything is in an anonymous
// namespace, so each translation unit keeps its own copy.
#pragma once
#include <cstdint>
#include <cstring>

namespace minifw {
namespace {

template <typename Scalar>
struct Vec16 {
  using T = Scalar;
  typedef Scalar reg __attribute__((vector_size(16)));
  static constexpr int lanes = 16 / sizeof(Scalar);
  static reg zero() { return reg{}; }
  static reg set1(T x) { return reg{} + x; }
  static reg broadcast(const T* p) { return reg{} + *p; }
  static reg load(const T* p) {
    reg r;
    std::memcpy(&r, p, sizeof r);
    return r;
  }
  static void store(T* p, reg x) { std::memcpy(p, &x, sizeof x); }
  // the first n < lanes values (the others read as 0)
  static reg load_n(const T* p, int64_t n) {
    reg r{};
    std::memcpy(&r, p, sizeof(T) * n);
    return r;
  }
  static void store_n(T* p, reg x, int64_t n) { std::memcpy(p, &x, sizeof(T) * n); }
  static reg add(reg a, reg b) { return a + b; }
  static reg sub(reg a, reg b) { return a - b; }
  static reg fma(reg a, reg b, reg c) { return a * b + c; }
  static reg fnma(reg a, reg b, reg c) { return c - a * b; }
  static reg mul(reg a, reg b) { return a * b; }
  static void prefetch(const T* p) { __builtin_prefetch(p); }
};

}  // namespace
}  // namespace minifw
