// Dropout's block kernel, compiled once per ISA (dropout.cpp,
// dropout_avx2.cpp, dropout_avx512.cpp): 16 Philox-4x32-10 counters at a
// time give the random words of 64 elements, then a loop the compiler
// vectorizes applies them. The portable generator is scalar; the AVX2 and
// AVX-512 files pass their own (16 counters in one or two vectors, the 32 x 32
// -> 64-bit products by vpmuludq). Anonymous namespace, no standard-library
// templates: each ISA's copy stays in its own translation unit.
#pragma once
#include <cstdint>

#include "dropout.h"

namespace minifw {
namespace {

constexpr uint32_t kPhiloxM0 = 0xD2511F53u, kPhiloxM1 = 0xCD9E8D57u;
constexpr uint32_t kPhiloxW0 = 0x9E3779B9u, kPhiloxW1 = 0xBB67AE85u;

// words[w * 16 + i] = word w of Philox(counter0 + i, key), i < 16.
// counter0 is a multiple of 16.
inline void philox_16_scalar(uint64_t counter0, uint32_t k0, uint32_t k1, uint32_t* words) {
  uint32_t c0[16], c1[16], c2[16], c3[16];
  for (int i = 0; i < 16; ++i) {
    const uint64_t ctr = counter0 + static_cast<uint64_t>(i);
    c0[i] = static_cast<uint32_t>(ctr);
    c1[i] = static_cast<uint32_t>(ctr >> 32);
    c2[i] = 0;
    c3[i] = 0;
  }
  for (int round = 0; round < 10; ++round) {
    for (int i = 0; i < 16; ++i) {
      const uint64_t p0 = static_cast<uint64_t>(kPhiloxM0) * c0[i];
      const uint64_t p1 = static_cast<uint64_t>(kPhiloxM1) * c2[i];
      const uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1[i] ^ k0;
      const uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3[i] ^ k1;
      c1[i] = static_cast<uint32_t>(p1);
      c3[i] = static_cast<uint32_t>(p0);
      c0[i] = n0;
      c2[i] = n2;
    }
    k0 += kPhiloxW0;
    k1 += kPhiloxW1;
  }
  for (int i = 0; i < 16; ++i) {
    words[i] = c0[i];
    words[16 + i] = c1[i];
    words[32 + i] = c2[i];
    words[48 + i] = c3[i];
  }
}

template <typename T, void (*Philox16)(uint64_t, uint32_t, uint32_t, uint32_t*)>
void dropout_blocks(const T* x, T* y, uint8_t* mask, int64_t n, int64_t b0, uint32_t threshold, T scale,
                    uint64_t seed) {
  const uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  alignas(64) uint32_t words[64];
  for (int64_t base = 0; base < n; base += 64) {
    Philox16(static_cast<uint64_t>(b0 + base / 64) * 16, k0, k1, words);
    const int64_t len = n - base < 64 ? n - base : 64;
    const T* xs = x + base;
    T* ys = y + base;
    uint8_t* ms = mask + base;
    // x times (scale or 0), as PyTorch multiplies by the scaled mask (a dropped
    // inf or nan gives nan); no branch on the load, so it vectorizes everywhere.
    for (int64_t i = 0; i < len; ++i) {
      const bool keep = words[i] >= threshold;
      ms[i] = keep ? 1 : 0;
      ys[i] = xs[i] * (keep ? scale : T(0));
    }
  }
}

template <typename T, void (*Philox16)(uint64_t, uint32_t, uint32_t, uint32_t*) = philox_16_scalar>
DropoutKernels<T> make_dropout_kernels() {
  return {dropout_blocks<T, Philox16>};
}

}  // namespace
}  // namespace minifw
