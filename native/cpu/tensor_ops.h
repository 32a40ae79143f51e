// Bias and tensor arithmetic, cuDNN-style (cudnnAddTensor, cudnnScaleTensor),
// over arrays seen as (outer, C, inner) where channels matter.
#pragma once
#include <cstdint>

namespace minifw {

// y[n, c, i] = x[n, c, i] + bias[c].
template <typename T>
void bias_add(int64_t outer, int64_t C, int64_t inner, const T* x, const T* bias, T* y, int nthreads);

// db[c] = sum over n, i of dy[n, c, i], accumulated in double.
template <typename T>
void bias_backward(int64_t outer, int64_t C, int64_t inner, const T* dy, T* db, int nthreads);

// out = alpha * a + beta * c, where c and out have shape `shape` (ndim <= 8,
// C-contiguous) and a is broadcast over the dimensions where a_shape is 1.
// With beta == 0, c is not read (so NaNs in it do not propagate), as in BLAS
// and cuDNN.
template <typename T>
void add_tensor(int ndim, const int64_t* shape, const int64_t* a_shape, const T* a, const T* c, T* out, T alpha,
                T beta, int nthreads);

// y = alpha * x.
template <typename T>
void scale_tensor(const T* x, T* y, int64_t n, T alpha, int nthreads);

// An embedding's weight gradient: dw (V x E) = 0, then dw[idx[p]] += g[p] for
// p = 0 .. P-1 in that order (g: P x E), as NumPy's add.at sums, so a row picked
// k times gets its k rows of g added in the order they were picked. The threads
// share dw's columns, so every element is summed by one thread in one order:
// the result does not depend on the thread count. idx must lie in [0, V).
template <typename T>
void rows_summed_by_index(int64_t P, int64_t E, int64_t V, const int64_t* idx, const T* g, T* dw, int nthreads);

}  // namespace minifw
