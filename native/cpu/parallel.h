// Threading: OpenMP underneath, one knob (minifw.set_num_threads).
#pragma once
#include <omp.h>

#include <cstdint>

namespace minifw {
// The largest count set_num_threads takes: max(256, 4 * CPUs), at most OpenMP's
// thread limit (OMP_THREAD_LIMIT).
int max_num_threads();
void set_num_threads(int n);  // 1 <= n <= max_num_threads(), else std::invalid_argument
int get_num_threads();        // what kernels use: OpenMP's count, clamped to [1, max_num_threads()]
// At load: if OpenMP's starting count (OMP_NUM_THREADS) exceeds max_num_threads(),
// lowers it to that; returns the starting count, for the Python side to warn about.
int cap_num_threads();

// Deterministic mode (minifw.use_deterministic_algorithms): a kernel whose way of
// sharing a reduction among threads would change the order of its sums with the
// thread count shares it another way, or not at all, while this is set.
void set_deterministic(bool on);
bool deterministic();

// x / m rounded up, and x rounded up to a multiple of m (x >= 0, m > 0).
inline int64_t ceil_div(int64_t x, int64_t m) { return (x + m - 1) / m; }
inline int64_t round_up(int64_t x, int64_t m) { return ceil_div(x, m) * m; }

// Split [0, n) into `parts` nearly equal contiguous ranges; range `i` is [begin, end).
inline void split_range(int64_t n, int parts, int i, int64_t& begin, int64_t& end) {
  int64_t base = n / parts, rem = n % parts;
  begin = i * base + (i < rem ? i : rem);
  end = begin + base + (i < rem ? 1 : 0);
}
}  // namespace minifw
