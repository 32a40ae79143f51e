// Bias and tensor ops: memory-bound loops the compiler vectorizes, split over
// threads where the tensor is large.
#include "tensor_ops.h"

#include <omp.h>

#include <algorithm>
#include <vector>

#include "split_work.h"

namespace minifw {

template <typename T>
void bias_add(int64_t outer, int64_t C, int64_t inner, const T* x, const T* bias, T* y, int nthreads) {
  if (inner == 1) {  // (N, C): add the bias row to every row
    for_each_range(outer, nthreads, grain_for(C), [&](int64_t b, int64_t e) {
      for (int64_t n = b; n < e; ++n) {
        const T* xr = x + n * C;
        T* yr = y + n * C;
        for (int64_t c = 0; c < C; ++c) yr[c] = xr[c] + bias[c];
      }
    });
    return;
  }
  for_each_range(outer * C, nthreads, grain_for(inner), [&](int64_t b, int64_t e) {
    for (int64_t q = b; q < e; ++q) {
      const T v = bias[q % C];
      const T* xp = x + q * inner;
      T* yp = y + q * inner;
      for (int64_t i = 0; i < inner; ++i) yp[i] = xp[i] + v;
    }
  });
}

template <typename T>
void bias_backward(int64_t outer, int64_t C, int64_t inner, const T* dy, T* db, int nthreads) {
  const int64_t per_channel = outer * inner;
  if (inner == 1) {  // column sums of an (N, C) matrix: row after row, vectorized across columns
    for_each_range(C, nthreads, grain_for(per_channel), [&](int64_t c0, int64_t c1) {
      std::vector<double> acc(static_cast<size_t>(c1 - c0), 0.0);
      double* a = acc.data();
      for (int64_t n = 0; n < outer; ++n) {
        const T* row = dy + n * C + c0;
#pragma omp simd
        for (int64_t c = 0; c < c1 - c0; ++c) a[c] += static_cast<double>(row[c]);
      }
      for (int64_t c = c0; c < c1; ++c) db[c] = static_cast<T>(a[c - c0]);
    });
    return;
  }
  for_each_range(C, nthreads, grain_for(per_channel), [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      // kLanes independent partial sums: one running sum would be a chain of
      // dependent adds; independent lanes keep several vector adds in flight.
      constexpr int64_t kLanes = 8;
      double lane[kLanes] = {};
      for (int64_t n = 0; n < outer; ++n) {
        const T* p = dy + (n * C + c) * inner;
        int64_t i = 0;
        for (; i + kLanes <= inner; i += kLanes)
          for (int64_t j = 0; j < kLanes; ++j) lane[j] += static_cast<double>(p[i + j]);
        for (int64_t j = 0; i + j < inner; ++j) lane[j] += static_cast<double>(p[i + j]);
      }
      double total = 0;
      for (int64_t j = 0; j < kLanes; ++j) total += lane[j];
      db[c] = static_cast<T>(total);
    }
  });
}

template <typename T>
void add_tensor(int ndim, const int64_t* shape, const int64_t* a_shape, const T* a, const T* c, T* out, T alpha,
                T beta, int nthreads) {
  // Merge neighbouring dimensions along which a is full in both or broadcast
  // in both (size-1 dimensions index nothing and are dropped): a same-shape
  // add becomes one long row, a (1, C, 1, 1) bias one broadcast run per (n, c).
  int64_t dims[8];
  bool full[8];
  int nd = 0;
  for (int d = 0; d < ndim; ++d) {
    if (shape[d] == 1) continue;
    const bool f = a_shape[d] != 1;
    if (nd > 0 && full[nd - 1] == f) {
      dims[nd - 1] *= shape[d];
    } else {
      dims[nd] = shape[d];
      full[nd] = f;
      ++nd;
    }
  }
  int64_t a_stride[8], step = 1, total = 1;  // a's element strides: 0 along broadcast dimensions
  for (int d = nd - 1; d >= 0; --d) {
    a_stride[d] = full[d] ? step : 0;
    if (full[d]) step *= dims[d];
    total *= dims[d];
  }
  // Rows along the last merged dimension; a's part of a row is either a full
  // row or one value broadcast along it. Threads split the elements, so one
  // long row is shared too.
  const int64_t last = nd > 0 ? dims[nd - 1] : 1;
  const bool a_row = nd > 0 && full[nd - 1];
  for_each_range(total, nthreads, kParallelGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end;) {
      const int64_t r = i / last, j0 = i % last, len = std::min(last - j0, end - i);
      int64_t off = 0;  // a's offset for row r: unravel r over the leading dimensions
      for (int64_t d = nd - 2, rest = r; d >= 0; --d) {
        off += (rest % dims[d]) * a_stride[d];
        rest /= dims[d];
      }
      const T* ar = a + off + (a_row ? j0 : 0);
      const T* cr = c + i;
      T* o = out + i;
      if (a_row) {
        if (beta == T(0))
          for (int64_t j = 0; j < len; ++j) o[j] = alpha * ar[j];
        else
          for (int64_t j = 0; j < len; ++j) o[j] = alpha * ar[j] + beta * cr[j];
      } else {
        const T v = alpha * ar[0];
        if (beta == T(0))
          for (int64_t j = 0; j < len; ++j) o[j] = v;
        else
          for (int64_t j = 0; j < len; ++j) o[j] = v + beta * cr[j];
      }
      i += len;
    }
  });
}

template <typename T>
void scale_tensor(const T* x, T* y, int64_t n, T alpha, int nthreads) {
  for_each_range(n, nthreads, kParallelGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) y[i] = alpha * x[i];
  });
}

template <typename T>
void rows_summed_by_index(int64_t P, int64_t E, int64_t V, const int64_t* idx, const T* g, T* dw, int nthreads) {
  // The threads zero dw in contiguous parts, then share its columns, in blocks of
  // a cache line, so no two threads write to one line: each adds its columns of
  // the rows of g in order. (NumPy's add.at took 1.7 ms for a char-LSTM's 2048 x
  // 128 gradient; a stable sort of the indices and add.reduceat 0.4 ms.)
  constexpr int64_t kBlock = 64 / sizeof(T);
  const int64_t blocks = (E + kBlock - 1) / kBlock;
  int64_t threads = std::min<int64_t>(nthreads, blocks);
  if ((V + P) * E < kParallelGrain) threads = 1;
  auto share = [&](int t, int parts) {
    int64_t z0, z1, b0, b1;
    split_range(V * E, parts, t, z0, z1);
    std::fill(dw + z0, dw + z1, T(0));
    if (parts > 1) {
#pragma omp barrier
    }
    split_range(blocks, parts, t, b0, b1);
    const int64_t c0 = b0 * kBlock, w = std::min(E, b1 * kBlock) - c0;
    for (int64_t p = 0; p < P && w > 0; ++p) {
      T* d = dw + idx[p] * E + c0;
      const T* s = g + p * E + c0;
#pragma omp simd
      for (int64_t j = 0; j < w; ++j) d[j] += s[j];
    }
  };
  if (threads <= 1) return share(0, 1);
#pragma omp parallel num_threads(static_cast<int>(threads))
  share(omp_get_thread_num(), omp_get_num_threads());
}

#define MINIFW_TENSOR_OPS_INSTANTIATE(T)                                                                   \
  template void bias_add<T>(int64_t, int64_t, int64_t, const T*, const T*, T*, int);                      \
  template void bias_backward<T>(int64_t, int64_t, int64_t, const T*, T*, int);                            \
  template void add_tensor<T>(int, const int64_t*, const int64_t*, const T*, const T*, T*, T, T, int);    \
  template void scale_tensor<T>(const T*, T*, int64_t, T, int);                                          \
  template void rows_summed_by_index<T>(int64_t, int64_t, int64_t, const int64_t*, const T*, T*, int);
MINIFW_TENSOR_OPS_INSTANTIATE(float)
MINIFW_TENSOR_OPS_INSTANTIATE(double)
#undef MINIFW_TENSOR_OPS_INSTANTIATE
}  // namespace minifw
