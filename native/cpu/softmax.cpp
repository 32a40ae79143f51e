// Softmax family. Two layouts: contiguous rows (inner == 1), each handled
// whole; and channels-at-positions (inner > 1), handled in blocks of
// positions so that the vectors run along the contiguous position axis and a
// block's C x B values stay in cache across the passes (max, exp + sum,
// normalize).
#include "softmax.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <vector>

#include "split_work.h"
#include "vecmath.h"

namespace minifw {
namespace {

// Sums in kLanes independent partial sums: a single running sum is a chain of
// dependent adds, independent lanes let the compiler keep several vector
// accumulators in flight.
template <typename T, typename F>
T lane_sum(int64_t n, F f) {
  constexpr int64_t kLanes = 16;
  T lane[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int64_t j = 0; j < kLanes; ++j) lane[j] += f(i + j);
  T s = 0;
  for (; i < n; ++i) s += f(i);
  for (int64_t j = 0; j < kLanes; ++j) s += lane[j];
  return s;
}

template <typename T>
T row_sum(const T* x, int64_t n) {
  return lane_sum<T>(n, [x](int64_t i) { return x[i]; });
}

// One row: y = softmax(x) or log_softmax(x).
template <typename T>
void softmax_row(const T* x, T* y, int64_t C, bool log, const VecMath<T>& vm) {
  const T m = vm.max(x, C);
  const T sum = vm.exp_shift_sum(x, m, y, C);
  if (log) {
    const T log_sum = std::log(sum);
    for (int64_t c = 0; c < C; ++c) y[c] = (x[c] - m) - log_sum;
  } else {
    vm.scale(y, y, C, T(1) / sum);
  }
}

// Positions per block in the channels-at-positions layout.
constexpr int64_t kBlock = 256;

// B positions starting at x (row stride `stride` between channels).
template <typename T>
void softmax_block(const T* x, T* y, int64_t C, int64_t stride, int64_t B, bool log, const VecMath<T>& vm,
                   T* m, T* sum) {
  std::copy(x, x + B, m);
  for (int64_t c = 1; c < C; ++c) {
    const T* xc = x + c * stride;
    for (int64_t i = 0; i < B; ++i) m[i] = std::max(m[i], xc[i]);
  }
  std::fill(sum, sum + B, T(0));
  for (int64_t c = 0; c < C; ++c) {
    T* yc = y + c * stride;
    vm.exp_sub(x + c * stride, m, yc, B);
    for (int64_t i = 0; i < B; ++i) sum[i] += yc[i];
  }
  if (log) {
    vm.log(sum, sum, B);
    for (int64_t c = 0; c < C; ++c) {
      const T* xc = x + c * stride;
      T* yc = y + c * stride;
      for (int64_t i = 0; i < B; ++i) yc[i] = (xc[i] - m[i]) - sum[i];
    }
  } else {
    for (int64_t i = 0; i < B; ++i) sum[i] = T(1) / sum[i];
    for (int64_t c = 0; c < C; ++c) {
      T* yc = y + c * stride;
      for (int64_t i = 0; i < B; ++i) yc[i] *= sum[i];
    }
  }
}

// Calls fn(x_offset, B, scratch) for every block of the channels-at-positions
// layout, in parallel over (outer, block) pairs. x_offset is the element
// offset of the block's first value in channel 0.
template <typename T, typename F>
void for_each_block(const SoftmaxShape& s, int nthreads, int scratch_rows, F&& fn) {
  const int64_t blocks = (s.inner + kBlock - 1) / kBlock;
  const int64_t items = s.outer * blocks;
  const int64_t cost = s.C * std::min(s.inner, kBlock) * 4;
  auto run = [&](int64_t begin, int64_t end) {
    std::vector<T> scratch(static_cast<size_t>(scratch_rows) * kBlock);
    for (int64_t item = begin; item < end; ++item) {
      const int64_t o = item / blocks, b0 = (item % blocks) * kBlock;
      fn(o * s.C * s.inner + b0, std::min(kBlock, s.inner - b0), scratch.data());
    }
  };
  for_each_range(items, nthreads, grain_for(cost), run);
}

template <typename F>
void for_each_row(const SoftmaxShape& s, int nthreads, F&& fn) {
  const int64_t grain = grain_for(4 * s.C);
  for_each_range(s.outer, nthreads, grain, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) fn(r);
  });
}

}  // namespace

template <typename T>
void softmax_forward(const SoftmaxShape& s, const T* x, T* y, bool log, int nthreads) {
  const VecMath<T>& vm = vecmath<T>();
  if (s.inner == 1) {
    for_each_row(s, nthreads, [&](int64_t r) { softmax_row(x + r * s.C, y + r * s.C, s.C, log, vm); });
    return;
  }
  for_each_block<T>(s, nthreads, 2, [&](int64_t off, int64_t B, T* scratch) {
    softmax_block(x + off, y + off, s.C, s.inner, B, log, vm, scratch, scratch + kBlock);
  });
}

template <typename T>
void softmax_backward(const SoftmaxShape& s, const T* dy, const T* y, T* dx, bool log, int nthreads) {
  const VecMath<T>& vm = vecmath<T>();
  if (s.inner == 1) {
    for_each_row(s, nthreads, [&](int64_t r) {
      const T *g = dy + r * s.C, *p = y + r * s.C;
      T* d = dx + r * s.C;
      if (log) {  // dx = dy - softmax * sum(dy), softmax = exp(log_softmax)
        const T total = row_sum(g, s.C);
        vm.exp(p, d, s.C);
        for (int64_t c = 0; c < s.C; ++c) d[c] = g[c] - d[c] * total;
      } else {  // dx = y * (dy - <dy, y>)
        vm.softmax_grad(g, p, d, s.C);
      }
    });
    return;
  }
  const int64_t st = s.inner;
  for_each_block<T>(s, nthreads, 1, [&](int64_t off, int64_t B, T* acc) {
    std::fill(acc, acc + B, T(0));
    for (int64_t c = 0; c < s.C; ++c) {
      const T *g = dy + off + c * st, *p = y + off + c * st;
      if (log)
        for (int64_t i = 0; i < B; ++i) acc[i] += g[i];
      else
        for (int64_t i = 0; i < B; ++i) acc[i] += g[i] * p[i];
    }
    for (int64_t c = 0; c < s.C; ++c) {
      const T *g = dy + off + c * st, *p = y + off + c * st;
      T* d = dx + off + c * st;
      if (log) {
        vm.exp(p, d, B);
        for (int64_t i = 0; i < B; ++i) d[i] = g[i] - d[i] * acc[i];
      } else {
        for (int64_t i = 0; i < B; ++i) d[i] = p[i] * (g[i] - acc[i]);
      }
    }
  });
}

namespace {
inline bool target_ok(int64_t t, int64_t C, int64_t ignore_index) {
  return t == ignore_index || (t >= 0 && t < C);
}

// Records the smallest bad position seen by any thread.
inline void note_bad(std::atomic<int64_t>& bad, int64_t pos) {
  int64_t cur = bad.load();
  while ((cur < 0 || pos < cur) && !bad.compare_exchange_weak(cur, pos)) {
  }
}
}  // namespace

template <typename T>
CrossEntropySums cross_entropy_forward(const SoftmaxShape& s, const T* logits, const int64_t* target,
                                       int64_t ignore_index, double label_smoothing, T* log_probs, T* losses,
                                       int nthreads) {
  softmax_forward(s, logits, log_probs, true, nthreads);
  const T keep = static_cast<T>(1 - label_smoothing), spread = static_cast<T>(label_smoothing / s.C);
  std::atomic<int64_t> bad{-1};
  // Per position: (1 - eps) * nll + eps / C * (-sum_c log_probs).
  auto loss_at = [&](T neg_sum_logp, const T* lp_of_target) -> T {
    return keep * -*lp_of_target + spread * neg_sum_logp;
  };
  if (s.inner == 1) {
    for_each_row(s, nthreads, [&](int64_t r) {
      const int64_t t = target[r];
      const T* lp = log_probs + r * s.C;
      if (!target_ok(t, s.C, ignore_index)) {
        note_bad(bad, r);
        losses[r] = T(0);
      } else {
        losses[r] = t == ignore_index ? T(0) : loss_at(-row_sum(lp, s.C), lp + t);
      }
    });
  } else {
    for_each_block<T>(s, nthreads, 1, [&](int64_t off, int64_t B, T* acc) {
      const int64_t o = off / (s.C * s.inner), i0 = off % (s.C * s.inner);
      std::fill(acc, acc + B, T(0));
      for (int64_t c = 0; c < s.C; ++c) {
        const T* lp = log_probs + off + c * s.inner;
        for (int64_t i = 0; i < B; ++i) acc[i] -= lp[i];
      }
      for (int64_t i = 0; i < B; ++i) {
        const int64_t pos = o * s.inner + i0 + i, t = target[pos];
        if (!target_ok(t, s.C, ignore_index)) {
          note_bad(bad, pos);
          losses[pos] = T(0);
        } else {
          losses[pos] = t == ignore_index ? T(0) : loss_at(acc[i], log_probs + off + t * s.inner + i);
        }
      }
    });
  }
  // The reduction runs serially in position order, in double: the same sum
  // for any thread count.
  CrossEntropySums out{0.0, 0, bad.load()};
  const int64_t P = s.positions();
  for (int64_t p = 0; p < P; ++p) {
    out.loss_sum += losses[p];
    out.count += target[p] != ignore_index;
  }
  return out;
}

template <typename T>
int64_t cross_entropy_backward(const SoftmaxShape& s, const T* log_probs, const int64_t* target,
                               int64_t ignore_index, double label_smoothing, const T* grad, double grad_scalar,
                               bool divide_by_count, T* dlogits, int nthreads) {
  const VecMath<T>& vm = vecmath<T>();
  const int64_t P = s.positions();
  if (!grad && divide_by_count) {
    int64_t count = 0;
    for (int64_t p = 0; p < P; ++p) count += target[p] != ignore_index;
    grad_scalar /= static_cast<double>(count);  // count 0: every position is ignored, g is unused
  }
  const T keep = static_cast<T>(1 - label_smoothing), spread = static_cast<T>(label_smoothing / s.C);
  std::atomic<int64_t> bad{-1};
  auto g_at = [&](int64_t pos) { return grad ? grad[pos] : static_cast<T>(grad_scalar); };
  if (s.inner == 1) {
    for_each_row(s, nthreads, [&](int64_t r) {
      const int64_t t = target[r];
      T* d = dlogits + r * s.C;
      if (t == ignore_index || !target_ok(t, s.C, ignore_index)) {
        if (t != ignore_index) note_bad(bad, r);
        std::fill(d, d + s.C, T(0));
        return;
      }
      const T g = g_at(r);
      vm.exp(log_probs + r * s.C, d, s.C);
      for (int64_t c = 0; c < s.C; ++c) d[c] = g * (d[c] - spread);
      d[t] -= g * keep;
    });
  } else {
    for_each_block<T>(s, nthreads, 1, [&](int64_t off, int64_t B, T* g) {
      const int64_t o = off / (s.C * s.inner), i0 = off % (s.C * s.inner);
      const int64_t pos0 = o * s.inner + i0;
      bool any_skipped = false;
      for (int64_t i = 0; i < B; ++i) {
        const int64_t t = target[pos0 + i];
        const bool ok = target_ok(t, s.C, ignore_index);
        if (!ok) note_bad(bad, pos0 + i);
        any_skipped |= !ok || t == ignore_index;
        g[i] = ok && t != ignore_index ? g_at(pos0 + i) : T(0);
      }
      for (int64_t c = 0; c < s.C; ++c) {
        T* d = dlogits + off + c * s.inner;
        vm.exp(log_probs + off + c * s.inner, d, B);
        for (int64_t i = 0; i < B; ++i) d[i] = g[i] * (d[i] - spread);
      }
      for (int64_t i = 0; i < B; ++i) {
        const int64_t t = target[pos0 + i];
        if (t == ignore_index || !target_ok(t, s.C, ignore_index)) {
          // exactly 0, even where log_probs holds inf or nan
          for (int64_t c = 0; any_skipped && c < s.C; ++c) dlogits[off + c * s.inner + i] = T(0);
        } else {
          dlogits[off + t * s.inner + i] -= g[i] * keep;
        }
      }
    });
  }
  return bad.load();
}

#define MINIFW_SOFTMAX_INSTANTIATE(T)                                                                        \
  template void softmax_forward<T>(const SoftmaxShape&, const T*, T*, bool, int);                             \
  template void softmax_backward<T>(const SoftmaxShape&, const T*, const T*, T*, bool, int);                  \
  template CrossEntropySums cross_entropy_forward<T>(const SoftmaxShape&, const T*, const int64_t*, int64_t, \
                                                     double, T*, T*, int);                                   \
  template int64_t cross_entropy_backward<T>(const SoftmaxShape&, const T*, const int64_t*, int64_t, double, \
                                             const T*, double, bool, T*, int);
MINIFW_SOFTMAX_INSTANTIATE(float)
MINIFW_SOFTMAX_INSTANTIATE(double)
#undef MINIFW_SOFTMAX_INSTANTIATE
}  // namespace minifw
