// GEMM on the GPU: C = alpha * op(A) * op(B) + beta * C, row-major, float or
// double, any M, N, K and leading dimensions: the tiled kernel of
// tiled_gemm.cuh over plain matrices; for float on TF32 tensor cores when
// minifw.backends.cuda.matmul.allow_tf32 is set (math_mode.h).
#include "gemm.h"
#include "math_mode.h"
#include "tiled_gemm.cuh"

namespace minifw {
namespace MINIFW_CUDA_NS {

template <typename T>
void gemm_tf32_if(bool tf32, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, T alpha, const T* a,
                  int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc, void* stream) {
  const MatrixProduct<T> op{M, N, K, trans_a, trans_b, a, lda, b, ldb, c, ldc, alpha, beta};
  launch_tiled_gemm<T>("gemm_tiled", op, M, N, K, 1, static_cast<cudaStream_t>(stream), tf32);
}

template <typename T>
void gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, T alpha, const T* a, int64_t lda, const T* b,
          int64_t ldb, T beta, T* c, int64_t ldc, void* stream) {
  gemm_tf32_if<T>(tf32_allowed(Tf32Use::matmul), trans_a, trans_b, M, N, K, alpha, a, lda, b, ldb, beta, c, ldc,
                  stream);
}

#define MINIFW_INSTANTIATE_GEMM(T)                                                                                 \
  template void gemm<T>(bool, bool, int64_t, int64_t, int64_t, T, const T*, int64_t, const T*, int64_t, T, T*,    \
                        int64_t, void*);                                                                          \
  template void gemm_tf32_if<T>(bool, bool, bool, int64_t, int64_t, int64_t, T, const T*, int64_t, const T*,     \
                                int64_t, T, T*, int64_t, void*);
MINIFW_INSTANTIATE_GEMM(float)
MINIFW_INSTANTIATE_GEMM(double)
}  // namespace MINIFW_CUDA_NS
}  // namespace minifw
