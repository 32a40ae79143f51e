// Launchers of the pooling kernels (pooling.cu); see launchers.h.
//
// The backward reports bad max-pooling indices through `status`, a device
// buffer of kPoolStatusWords long longs that the launcher initializes and its
// kernels fill; the caller copies it back and decodes it with
// pool_first_bad_position.
#pragma once
#include <climits>
#include <cstdint>

#include "cpu/pooling.h"
#include "launchers.h"

namespace minifw {
constexpr int kPoolStatusWords = 2;

// The flat position in dy of the first index outside [0, H * W), or -1 (the
// CPU kernel's return value). status[0] holds LLONG_MAX - position, the
// maximum over bad positions (so the first one: integer atomics make it the
// same whatever order the threads ran in); 0 means none.
inline int64_t pool_first_bad_position(const long long* status) {
  return status[0] == 0 ? -1 : int64_t(LLONG_MAX - status[0]);
}
}  // namespace minifw

#define MINIFW_POOL_LAUNCHERS                                                                                 \
  template <typename T>                                                                                        \
  void pool_forward(const PoolShape& s, PoolMode mode, const T* x, T* y, int64_t* indices, void* stream);     \
  template <typename T>                                                                                        \
  void pool_backward(const PoolShape& s, PoolMode mode, const T* dy, const int64_t* indices, T* dx,           \
                     long long* status, void* stream);
MINIFW_DECLARE_CUDA_LAUNCHERS(MINIFW_POOL_LAUNCHERS)
