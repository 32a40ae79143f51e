#include "parallel.h"

#include <atomic>
#include <stdexcept>
#include <string>

namespace minifw {
void set_num_threads(int n) {
  if (n < 1) throw std::invalid_argument("set_num_threads: n must be >= 1, got " + std::to_string(n));
  omp_set_num_threads(n);
}
int get_num_threads() { return omp_get_max_threads(); }

namespace {
std::atomic<bool> g_deterministic{false};
}
void set_deterministic(bool on) { g_deterministic.store(on, std::memory_order_relaxed); }
bool deterministic() { return g_deterministic.load(std::memory_order_relaxed); }
}  // namespace minifw
