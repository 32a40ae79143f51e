// Threading: OpenMP underneath, one knob (minifw.set_num_threads).
#pragma once
#include <omp.h>

#include <cstdint>

namespace minifw {
void set_num_threads(int n);  // n >= 1
int get_num_threads();

// Deterministic mode (minifw.use_deterministic_algorithms): a kernel whose way of
// sharing a reduction among threads would change the order of its sums with the
// thread count shares it another way, or not at all, while this is set.
void set_deterministic(bool on);
bool deterministic();

// Split [0, n) into `parts` nearly equal contiguous ranges; range `i` is [begin, end).
inline void split_range(int64_t n, int parts, int i, int64_t& begin, int64_t& end) {
  int64_t base = n / parts, rem = n % parts;
  begin = i * base + (i < rem ? i : rem);
  end = begin + base + (i < rem ? 1 : 0);
}
}  // namespace minifw
