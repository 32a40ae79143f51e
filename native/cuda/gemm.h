// Launcher of the GEMM kernel (gemm.cu); see launchers.h.
#pragma once
#include "launchers.h"

// C (M x N, row stride ldc) = alpha * op(A) * op(B) + beta * C, all row-major; C is not
// read when beta is 0.
// gemm_tf32_if: the same, on TF32 tensor cores (float) when `tf32` says so rather than
// the matmul switch (conv.cu's per-image products follow the convolution switch).
#define MINIFW_GEMM_LAUNCHERS                                                                               \
  template <typename T>                                                                                      \
  void gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, T alpha, const T* a, int64_t lda,   \
            const T* b, int64_t ldb, T beta, T* c, int64_t ldc, void* stream);                               \
  template <typename T>                                                                                      \
  void gemm_tf32_if(bool tf32, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, T alpha,         \
                    const T* a, int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc, void* stream);
MINIFW_DECLARE_CUDA_LAUNCHERS(MINIFW_GEMM_LAUNCHERS)
