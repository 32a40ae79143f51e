// GEMM on the GPU: C = alpha * op(A) * op(B) + beta * C, row-major, float or
// double, any M, N, K and leading dimensions: the tiled kernel of
// tiled_gemm.cuh over plain matrices.
#include "gemm.h"
#include "tiled_gemm.cuh"

namespace minifw {
namespace MINIFW_CUDA_NS {
namespace {

template <typename T>
struct MatrixProduct {
  int64_t M, N, K;
  bool trans_a, trans_b;
  const T* a;
  int64_t lda;
  const T* b;
  int64_t ldb;
  T* c;
  int64_t ldc;
  T alpha, beta;

  __device__ int64_t rows() const { return M; }
  __device__ int64_t cols() const { return N; }
  __device__ int64_t depth() const { return K; }
  // op(A)[r][k] is A[r][k] (k contiguous) or A[k][r] (r contiguous); likewise for B.
  __device__ bool a_depth_fastest() const { return !trans_a; }
  __device__ bool b_cols_fastest() const { return !trans_b; }
  __device__ T load_a(int64_t, int64_t r, int64_t k) const { return trans_a ? a[k * lda + r] : a[r * lda + k]; }
  __device__ T load_b(int64_t, int64_t k, int64_t n) const { return trans_b ? b[n * ldb + k] : b[k * ldb + n]; }
  __device__ void store(int64_t, int64_t r, int64_t n, T acc) const {
    T* out = c + r * ldc + n;
    *out = beta == T(0) ? alpha * acc : alpha * acc + beta * *out;  // beta 0: C is not read (it may be NaN)
  }
};
}  // namespace

template <typename T>
void gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, T alpha, const T* a, int64_t lda, const T* b,
          int64_t ldb, T beta, T* c, int64_t ldc, void* stream) {
  const MatrixProduct<T> op{M, N, K, trans_a, trans_b, a, lda, b, ldb, c, ldc, alpha, beta};
  launch_tiled_gemm<T>("gemm_tiled", op, M, N, 1, static_cast<cudaStream_t>(stream));
}

template void gemm<float>(bool, bool, int64_t, int64_t, int64_t, float, const float*, int64_t, const float*, int64_t,
                          float, float*, int64_t, void*);
template void gemm<double>(bool, bool, int64_t, int64_t, int64_t, double, const double*, int64_t, const double*,
                           int64_t, double, double*, int64_t, void*);
}  // namespace MINIFW_CUDA_NS
}  // namespace minifw
