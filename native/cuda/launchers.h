// How the launchers of minifw's CUDA kernels are declared. A launcher is a host
// function that takes device pointers (host pointers for "cudasim") and the
// caller's stream, and launches one or more kernels on it. Each family's
// launchers are compiled twice from the same sources (native/cuda/<family>.cu):
// by nvcc into minifw::cuda, by the host compiler against cudasim into
// minifw::cudasim. A family's header lists them once, in a macro, and declares
// them in both namespaces with MINIFW_DECLARE_CUDA_LAUNCHERS:
//
//   #define MINIFW_POOL_LAUNCHERS template <typename T> void pool_forward(...);
//   MINIFW_DECLARE_CUDA_LAUNCHERS(MINIFW_POOL_LAUNCHERS)
//
// Arguments are checked by the bindings before a launcher sees them.
#pragma once
#include <cstdint>

#ifdef MINIFW_WITH_CUDA
#define MINIFW_DECLARE_CUDA_LAUNCHERS(decls) \
  namespace minifw {                         \
  namespace cudasim {                        \
  decls                                      \
  }                                          \
  namespace cuda {                           \
  decls                                      \
  }                                          \
  }
#else
#define MINIFW_DECLARE_CUDA_LAUNCHERS(decls) \
  namespace minifw {                         \
  namespace cudasim {                        \
  decls                                      \
  }                                          \
  }
#endif
