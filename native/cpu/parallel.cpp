#include "parallel.h"

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>

namespace minifw {
// The most threads a kernel may ask OpenMP for: the larger of 256 and four per
// CPU, and never above OpenMP's own limit (OMP_THREAD_LIMIT). A count far above
// the CPU count gains nothing and, beyond what the system can start, makes
// libgomp abort the process ("Thread creation failed") or crash.
// Computed once: every kernel asks get_num_threads(), and the CPU count is a system call.
int max_num_threads() {
  static const int limit = [] {
    const int64_t cpus = std::max<int64_t>(1, std::thread::hardware_concurrency());
    const int64_t by_cpus = std::max<int64_t>(256, 4 * cpus);
    const int64_t omp_limit = omp_get_thread_limit();  // INT_MAX when unset
    return static_cast<int>(std::max<int64_t>(1, std::min(by_cpus, omp_limit)));
  }();
  return limit;
}

void set_num_threads(int n) {
  if (n < 1) throw std::invalid_argument("set_num_threads: n must be >= 1, got " + std::to_string(n));
  const int limit = max_num_threads();
  if (n > limit)
    throw std::invalid_argument("set_num_threads: n must be in [1, " + std::to_string(limit) + "], got " +
                                std::to_string(n));
  omp_set_num_threads(n);
}

// Clamped, so that a kernel running on a thread whose OpenMP setting came from a
// too-large OMP_NUM_THREADS still asks for a count that can be started.
int get_num_threads() { return std::max(1, std::min(omp_get_max_threads(), max_num_threads())); }

int cap_num_threads() {
  const int requested = omp_get_max_threads();
  const int limit = max_num_threads();
  if (requested > limit) omp_set_num_threads(limit);
  return requested;
}

namespace {
std::atomic<bool> g_deterministic{false};
}
void set_deterministic(bool on) { g_deterministic.store(on, std::memory_order_relaxed); }
bool deterministic() { return g_deterministic.load(std::memory_order_relaxed); }
}  // namespace minifw
