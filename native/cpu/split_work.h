// Splitting memory-bound loops over threads, only where the work pays for
// waking them: below a few tens of thousands of elements a parallel region
// costs more than it saves.
#pragma once
#include <omp.h>

#include <cstdint>

#include "parallel.h"

namespace minifw {

// Elements (or element-sized units of work) below which one thread is used.
constexpr int64_t kParallelGrain = 1 << 15;

// The grain for items of `cost` units each; an item of cost 0 (an empty
// plane or row) counts as one unit, so no caller divides by zero.
constexpr int64_t grain_for(int64_t cost) {
  return cost <= 1 ? kParallelGrain : cost >= kParallelGrain ? 1 : kParallelGrain / cost;
}

// fn(begin, end) over nearly equal contiguous parts of [0, n), one per thread,
// with at most one part per `grain` units (so small inputs stay on the caller).
template <typename F>
void for_each_range(int64_t n, int nthreads, int64_t grain, F&& fn) {
  int64_t parts = grain > 0 ? n / grain : n;
  if (parts > nthreads) parts = nthreads;
  if (parts <= 1) {
    if (n > 0) fn(int64_t(0), n);
    return;
  }
#pragma omp parallel num_threads(static_cast<int>(parts))
  {
    int64_t begin, end;
    split_range(n, static_cast<int>(parts), omp_get_thread_num(), begin, end);
    if (begin < end) fn(begin, end);
  }
}

// fn(i) for i in [0, n), items of `cost` units each, in parallel when n * cost
// is large enough; dynamic scheduling as the items may differ in cost.
template <typename F>
void for_each_item(int64_t n, int64_t cost, int nthreads, F&& fn) {
  if (nthreads <= 1 || n < 2 || n * cost < kParallelGrain) {
    for (int64_t i = 0; i < n; ++i) fn(i);
    return;
  }
#pragma omp parallel for num_threads(nthreads) schedule(dynamic, 1)
  for (int64_t i = 0; i < n; ++i) fn(i);
}

}  // namespace minifw
