// Device memory for the bindings' own small buffers (a kernel's status words,
// a loss sum): allocation on a stream, and a copy back to the host that waits
// for the stream. On "cudasim" device memory is host memory. Array data is
// never allocated here: CuPy (or NumPy for "cudasim") owns it.
#pragma once
#include <cstddef>

#include "launchers.h"

#define MINIFW_MEMORY_LAUNCHERS                                           \
  void* device_alloc(size_t bytes, void* stream);                         \
  void device_free(void* pointer, void* stream); /* never throws */       \
  void copy_to_host(void* host, const void* device, size_t bytes, void* stream);
MINIFW_DECLARE_CUDA_LAUNCHERS(MINIFW_MEMORY_LAUNCHERS)
