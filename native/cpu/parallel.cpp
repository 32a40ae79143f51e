#include "parallel.h"

#include <stdexcept>
#include <string>

namespace minifw {
void set_num_threads(int n) {
  if (n < 1) throw std::invalid_argument("set_num_threads: n must be >= 1, got " + std::to_string(n));
  omp_set_num_threads(n);
}
int get_num_threads() { return omp_get_max_threads(); }
}  // namespace minifw
