// Batch normalization. Two traversal orders, chosen by the layout:
//  - channel by channel (inner >= kWideInner): each channel's M values are
//    outer runs of `inner` contiguous values; the passes over one channel
//    follow each other while its values are still in cache;
//  - column-wise (small inner, e.g. (N, C) input): rows of C * inner values
//    are swept with per-column accumulators, vectorized across channels.
// Threads split the channels.
#include "batchnorm.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "split_work.h"

namespace minifw {
namespace {

constexpr int64_t kWideInner = 16;

// fn(c0, c1) over ranges of channels.
template <typename F>
void for_channel_ranges(const BnShape& s, int nthreads, F&& fn) {
  for_each_range(s.C, nthreads, grain_for(s.per_channel()), fn);
}

// Sums of f(i) and g(i) over i in [0, n), in double, each in kLanes
// independent partial sums: one running sum is a chain of dependent adds (a
// few cycles each), independent lanes let the compiler keep several vector
// accumulators in flight.
template <typename F, typename G>
void lane_sums(int64_t n, F f, G g, double& sum_f, double& sum_g) {
  constexpr int64_t kLanes = 8;
  double lf[kLanes] = {}, lg[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int64_t j = 0; j < kLanes; ++j) {
      lf[j] += f(i + j);
      lg[j] += g(i + j);
    }
  for (int64_t j = 0; i + j < n; ++j) {
    lf[j] += f(i + j);
    lg[j] += g(i + j);
  }
  for (int64_t j = 0; j < kLanes; ++j) {
    sum_f += lf[j];
    sum_g += lg[j];
  }
}

// Per-channel sums of f(x) (double) for channels [c0, c1), written to out[c - c0].
// Column-wise for small inner, channel-wise otherwise.
template <typename T, typename F>
void channel_sums(const BnShape& s, int64_t c0, int64_t c1, F f, double* out) {
  const int64_t row = s.C * s.inner;
  if (s.inner >= kWideInner) {
    for (int64_t c = c0; c < c1; ++c) {
      double total = 0, unused = 0;
      for (int64_t n = 0; n < s.outer; ++n) {
        const int64_t base = n * row + c * s.inner;
        lane_sums(s.inner, [&](int64_t i) { return f(base + i, c); }, [](int64_t) { return 0.0; }, total, unused);
      }
      out[c - c0] = total;
    }
    return;
  }
  const int64_t cols = (c1 - c0) * s.inner, j0 = c0 * s.inner;
  std::vector<double> acc(static_cast<size_t>(cols), 0.0);
  for (int64_t n = 0; n < s.outer; ++n) {
    const int64_t base = n * row + j0;
    double* a = acc.data();
    if (s.inner == 1) {
#pragma omp simd
      for (int64_t j = 0; j < cols; ++j) a[j] += f(base + j, c0 + j);
    } else {
      for (int64_t j = 0; j < cols; ++j) a[j] += f(base + j, c0 + j / s.inner);
    }
  }
  for (int64_t c = c0; c < c1; ++c) {
    double total = 0;
    for (int64_t i = 0; i < s.inner; ++i) total += acc[(c - c0) * s.inner + i];
    out[c - c0] = total;
  }
}

// y[n, c, i] = f(flat index, c) for channels [c0, c1).
template <typename T, typename F>
void channel_map(const BnShape& s, int64_t c0, int64_t c1, T* y, F f) {
  const int64_t row = s.C * s.inner;
  for (int64_t n = 0; n < s.outer; ++n) {
    if (s.inner == 1) {
#pragma omp simd
      for (int64_t c = c0; c < c1; ++c) y[n * row + c] = f(n * row + c, c);
    } else {
      for (int64_t c = c0; c < c1; ++c) {
        const int64_t base = n * row + c * s.inner;
        T* yp = y + base;
#pragma omp simd
        for (int64_t i = 0; i < s.inner; ++i) yp[i] = f(base + i, c);
      }
    }
  }
}

}  // namespace

template <typename T>
void batch_norm_forward_training(const BnShape& s, const T* x, const T* weight, const T* bias, T* running_mean,
                                 T* running_var, double momentum, double eps, T* y, T* save_mean, T* save_invstd,
                                 int nthreads) {
  const double M = static_cast<double>(s.per_channel());
  for_channel_ranges(s, nthreads, [&](int64_t c0, int64_t c1) {
    std::vector<double> mean(static_cast<size_t>(c1 - c0)), sq(static_cast<size_t>(c1 - c0));
    if (s.inner >= kWideInner) {
      // One channel at a time: its values stay in cache from pass to pass.
      for (int64_t c = c0; c < c1; ++c) {
        channel_sums<T>(s, c, c + 1, [x](int64_t i, int64_t) { return static_cast<double>(x[i]); }, &mean[c - c0]);
        mean[c - c0] /= M;
        const double m = mean[c - c0];
        channel_sums<T>(s, c, c + 1, [x, m](int64_t i, int64_t) {
          const double d = static_cast<double>(x[i]) - m;
          return d * d;
        }, &sq[c - c0]);
      }
    } else {
      channel_sums<T>(s, c0, c1, [x](int64_t i, int64_t) { return static_cast<double>(x[i]); }, mean.data());
      for (auto& m : mean) m /= M;
      const double* mp = mean.data();
      channel_sums<T>(s, c0, c1, [x, mp, c0](int64_t i, int64_t c) {
        const double d = static_cast<double>(x[i]) - mp[c - c0];
        return d * d;
      }, sq.data());
    }
    std::vector<T> mean_t(static_cast<size_t>(c1 - c0)), scale_t(static_cast<size_t>(c1 - c0)),
        shift_t(static_cast<size_t>(c1 - c0));
    for (int64_t c = c0; c < c1; ++c) {
      const double var = sq[c - c0] / M;  // biased: what normalizes
      const double invstd = 1.0 / std::sqrt(var + eps);
      save_mean[c] = static_cast<T>(mean[c - c0]);
      save_invstd[c] = static_cast<T>(invstd);
      mean_t[c - c0] = static_cast<T>(mean[c - c0]);
      scale_t[c - c0] = static_cast<T>(invstd * (weight ? static_cast<double>(weight[c]) : 1.0));
      shift_t[c - c0] = bias ? bias[c] : T(0);
      if (running_mean) {
        running_mean[c] = static_cast<T>((1 - momentum) * running_mean[c] + momentum * mean[c - c0]);
        running_var[c] = static_cast<T>((1 - momentum) * running_var[c] + momentum * sq[c - c0] / (M - 1));
      }
    }
    // y = (x - mean) * (invstd * w) + b: subtracting first keeps full
    // precision when the mean is large against the spread.
    const T *mt = mean_t.data(), *sc = scale_t.data(), *sh = shift_t.data();
    channel_map(s, c0, c1, y, [x, mt, sc, sh, c0](int64_t i, int64_t c) {
      return (x[i] - mt[c - c0]) * sc[c - c0] + sh[c - c0];
    });
  });
}

template <typename T>
void batch_norm_forward_inference(const BnShape& s, const T* x, const T* weight, const T* bias,
                                  const T* running_mean, const T* running_var, double eps, T* y, int nthreads) {
  std::vector<T> scale(static_cast<size_t>(s.C)), shift(static_cast<size_t>(s.C));
  for (int64_t c = 0; c < s.C; ++c) {
    const double invstd = 1.0 / std::sqrt(static_cast<double>(running_var[c]) + eps);
    scale[c] = static_cast<T>(invstd * (weight ? static_cast<double>(weight[c]) : 1.0));
    shift[c] = bias ? bias[c] : T(0);
  }
  const T *sc = scale.data(), *sh = shift.data();
  // Elementwise: split the rows (or the channels of an (N, C) input) over threads.
  if (s.inner == 1) {
    for_each_range(s.outer, nthreads, grain_for(s.C), [&](int64_t b, int64_t e) {
      for (int64_t n = b; n < e; ++n) {
        const T* xp = x + n * s.C;
        T* yp = y + n * s.C;
#pragma omp simd
        for (int64_t c = 0; c < s.C; ++c) yp[c] = (xp[c] - running_mean[c]) * sc[c] + sh[c];
      }
    });
    return;
  }
  const int64_t planes = s.outer * s.C;
  for_each_range(planes, nthreads, grain_for(s.inner), [&](int64_t b, int64_t e) {
    for (int64_t q = b; q < e; ++q) {
      const int64_t c = q % s.C;
      const T m = running_mean[c], a = sc[c], t = sh[c];
      const T* xp = x + q * s.inner;
      T* yp = y + q * s.inner;
#pragma omp simd
      for (int64_t i = 0; i < s.inner; ++i) yp[i] = (xp[i] - m) * a + t;
    }
  });
}

template <typename T>
void batch_norm_backward(const BnShape& s, const T* dy, const T* x, const T* weight, const T* save_mean,
                         const T* save_invstd, T* dx, T* dweight, T* dbias, int nthreads) {
  const double M = static_cast<double>(s.per_channel());
  for_channel_ranges(s, nthreads, [&](int64_t c0, int64_t c1) {
    const int64_t n = c1 - c0;
    std::vector<double> sum_dy(static_cast<size_t>(n)), sum_dy_xhat(static_cast<size_t>(n));
    auto sums = [&](int64_t a, int64_t b) {  // channels [a, b): sum dy and sum dy * (x - mean) * invstd
      if (s.inner >= kWideInner) {  // one pass over each run of the channel for both sums
        const int64_t row = s.C * s.inner;
        for (int64_t c = a; c < b; ++c) {
          const double m = static_cast<double>(save_mean[c]);
          double sd = 0, sdx = 0;
          for (int64_t n = 0; n < s.outer; ++n) {
            const T *g = dy + n * row + c * s.inner, *xv = x + n * row + c * s.inner;
            lane_sums(s.inner, [g](int64_t i) { return static_cast<double>(g[i]); },
                      [g, xv, m](int64_t i) { return static_cast<double>(g[i]) * (static_cast<double>(xv[i]) - m); },
                      sd, sdx);
          }
          sum_dy[c - c0] = sd;
          sum_dy_xhat[c - c0] = sdx;
        }
      } else {
        channel_sums<T>(s, a, b, [dy](int64_t i, int64_t) { return static_cast<double>(dy[i]); },
                        &sum_dy[a - c0]);
        channel_sums<T>(s, a, b, [dy, x, save_mean](int64_t i, int64_t c) {
          return static_cast<double>(dy[i]) * (static_cast<double>(x[i]) - static_cast<double>(save_mean[c]));
        }, &sum_dy_xhat[a - c0]);
      }
      for (int64_t c = a; c < b; ++c) sum_dy_xhat[c - c0] *= static_cast<double>(save_invstd[c]);
    };
    // dx = w * invstd * (dy - mean(dy) - xhat * mean(dy * xhat)), written as
    // k_dy * dy + k_x * (x - mean) + k_0 (subtracting the mean first, as in the forward).
    // A coefficient too large for T (a weight near T's maximum) would turn into inf and
    // the sum into inf - inf: such a channel is computed again in double. A non-finite
    // w * invstd (an infinite weight) makes the channel NaN, as the chain rule through
    // the mean and variance does (inf * 0 and inf - inf).
    std::vector<T> k_dy(static_cast<size_t>(n)), k_x(static_cast<size_t>(n)), k_0(static_cast<size_t>(n));
    std::vector<std::array<double, 3>> wide(static_cast<size_t>(n));
    std::vector<char> exact(static_cast<size_t>(n));  // 0: T is enough; 1: in double; 2: NaN
    auto coefficients = [&](int64_t a, int64_t b) {
      for (int64_t c = a; c < b; ++c) {
        const double invstd = save_invstd[c], w = weight ? static_cast<double>(weight[c]) : 1.0;
        const double g = w * invstd, mean_dy = sum_dy[c - c0] / M, mean_dyx = sum_dy_xhat[c - c0] / M;
        const std::array<double, 3> k{g, -g * mean_dyx * invstd, -g * mean_dy};
        k_dy[c - c0] = static_cast<T>(k[0]);
        k_x[c - c0] = static_cast<T>(k[1]);
        k_0[c - c0] = static_cast<T>(k[2]);
        wide[c - c0] = k;
        const double top = static_cast<double>(std::numeric_limits<T>::max());
        exact[c - c0] = !std::isfinite(g) ? 2 : (std::fabs(k[0]) > top || std::fabs(k[1]) > top ||
                                                 std::fabs(k[2]) > top) ? 1 : 0;
        dweight[c] = static_cast<T>(sum_dy_xhat[c - c0]);
        dbias[c] = static_cast<T>(sum_dy[c - c0]);
      }
    };
    const T *kd = k_dy.data(), *kx = k_x.data(), *k0 = k_0.data();
    auto apply = [&](int64_t a, int64_t b) {
      channel_map(s, a, b, dx, [dy, x, kd, kx, k0, save_mean, c0](int64_t i, int64_t c) {
        return kd[c - c0] * dy[i] + (kx[c - c0] * (x[i] - save_mean[c]) + k0[c - c0]);
      });
      for (int64_t c = a; c < b; ++c) {
        if (!exact[c - c0]) continue;
        const std::array<double, 3>& k = wide[c - c0];
        const double m = static_cast<double>(save_mean[c]);
        for (int64_t q = 0; q < s.outer; ++q)
          for (int64_t i = q * s.C * s.inner + c * s.inner, e = i + s.inner; i < e; ++i)
            dx[i] = exact[c - c0] == 2 ? std::numeric_limits<T>::quiet_NaN()
                                       : static_cast<T>(k[0] * static_cast<double>(dy[i]) +
                                                        (k[1] * (static_cast<double>(x[i]) - m) + k[2]));
      }
    };
    if (s.inner >= kWideInner) {
      for (int64_t c = c0; c < c1; ++c) {  // one channel at a time, while it is in cache
        sums(c, c + 1);
        coefficients(c, c + 1);
        apply(c, c + 1);
      }
    } else {
      sums(c0, c1);
      coefficients(c0, c1);
      apply(c0, c1);
    }
  });
}

#define MINIFW_BN_INSTANTIATE(T)                                                                                  \
  template void batch_norm_forward_training<T>(const BnShape&, const T*, const T*, const T*, T*, T*, double,     \
                                               double, T*, T*, T*, int);                                         \
  template void batch_norm_forward_inference<T>(const BnShape&, const T*, const T*, const T*, const T*, const T*, \
                                                double, T*, int);                                                \
  template void batch_norm_backward<T>(const BnShape&, const T*, const T*, const T*, const T*, const T*, T*, T*, \
                                       T*, int);
MINIFW_BN_INSTANTIATE(float)
MINIFW_BN_INSTANTIATE(double)
#undef MINIFW_BN_INSTANTIATE
}  // namespace minifw
