// Activations. The piecewise-linear ones are plain loops the compiler
// vectorizes; sigmoid, tanh and elu go through the ISA-specific vecmath.
#include "activation.h"

#include <stdexcept>

#include "split_work.h"
#include "vecmath.h"

namespace minifw {

ActMode parse_act_mode(const std::string& name) {
  if (name == "relu") return ActMode::relu;
  if (name == "leaky_relu") return ActMode::leaky_relu;
  if (name == "sigmoid") return ActMode::sigmoid;
  if (name == "tanh") return ActMode::tanh;
  if (name == "elu") return ActMode::elu;
  if (name == "relu6") return ActMode::relu6;
  throw std::invalid_argument("unknown activation mode '" + name + "'");
}

bool activation_backward_needs_x(const ActParams& p) {
  // With slope < 0 (alpha < 0) a negative x gives a positive y, so y's sign no
  // longer says which branch produced it.
  return (p.mode == ActMode::leaky_relu && p.negative_slope < 0) || (p.mode == ActMode::elu && p.alpha < 0);
}

namespace {
// Units of work per element, so the transcendental modes go parallel sooner.
int64_t cost_per_element(ActMode mode) {
  return mode == ActMode::sigmoid || mode == ActMode::tanh || mode == ActMode::elu ? 8 : 1;
}
}  // namespace

template <typename T>
void activation_forward(const ActParams& p, const T* x, T* y, int64_t n, int nthreads) {
  const VecMath<T>& vm = vecmath<T>();
  const T slope = static_cast<T>(p.negative_slope), alpha = static_cast<T>(p.alpha);
  const int64_t grain = grain_for(cost_per_element(p.mode));
  for_each_range(n, nthreads, grain, [&](int64_t b, int64_t e) {
    const T* xs = x + b;
    T* ys = y + b;
    const int64_t len = e - b;
    switch (p.mode) {
      // Written so that NaN propagates: (x < 0) is false for NaN.
      case ActMode::relu:
        for (int64_t i = 0; i < len; ++i) ys[i] = xs[i] < T(0) ? T(0) : xs[i];
        break;
      case ActMode::leaky_relu:
        for (int64_t i = 0; i < len; ++i) ys[i] = xs[i] > T(0) ? xs[i] : xs[i] * slope;
        break;
      case ActMode::relu6:
        for (int64_t i = 0; i < len; ++i) {
          const T v = xs[i] < T(0) ? T(0) : xs[i];
          ys[i] = v > T(6) ? T(6) : v;
        }
        break;
      case ActMode::sigmoid: vm.sigmoid(xs, ys, len); break;
      case ActMode::tanh: vm.tanh(xs, ys, len); break;
      case ActMode::elu: vm.elu(xs, ys, len, alpha); break;
    }
  });
}

template <typename T>
void activation_backward(const ActParams& p, const T* dy, const T* y, const T* x, T* dx, int64_t n,
                         int nthreads) {
  if (activation_backward_needs_x(p) && !x)
    throw std::invalid_argument("activation_backward: this mode needs the forward input x");
  const T slope = static_cast<T>(p.negative_slope), alpha = static_cast<T>(p.alpha);
  // The branch is taken on x when it is given, else on y (same sign as x here).
  const T* sel = x ? x : y;
  for_each_range(n, nthreads, kParallelGrain, [&](int64_t b, int64_t e) {
    const T *g = dy + b, *ys = y + b, *s = sel + b;
    T* d = dx + b;
    const int64_t len = e - b;
    switch (p.mode) {
      // dy is loaded whichever way the branch goes, so each select vectorizes
      // (a load under the condition would keep a mispredicted branch per element).
      case ActMode::relu:
        for (int64_t i = 0; i < len; ++i) {
          const T gi = g[i];
          d[i] = s[i] > T(0) ? gi : T(0);
        }
        break;
      case ActMode::leaky_relu:
        for (int64_t i = 0; i < len; ++i) d[i] = s[i] > T(0) ? g[i] : g[i] * slope;
        break;
      case ActMode::relu6:
        for (int64_t i = 0; i < len; ++i) {
          const T gi = g[i], yi = ys[i];
          d[i] = (yi > T(0)) & (yi < T(6)) ? gi : T(0);
        }
        break;
      case ActMode::sigmoid:
        for (int64_t i = 0; i < len; ++i) d[i] = g[i] * ys[i] * (T(1) - ys[i]);
        break;
      case ActMode::tanh:
        for (int64_t i = 0; i < len; ++i) d[i] = g[i] * (T(1) - ys[i] * ys[i]);
        break;
      case ActMode::elu:  // d/dx alpha * (exp(x) - 1) = y + alpha
        for (int64_t i = 0; i < len; ++i) d[i] = s[i] > T(0) ? g[i] : g[i] * (ys[i] + alpha);
        break;
    }
  });
}

template void activation_forward<float>(const ActParams&, const float*, float*, int64_t, int);
template void activation_forward<double>(const ActParams&, const double*, double*, int64_t, int);
template void activation_backward<float>(const ActParams&, const float*, const float*, const float*, float*,
                                         int64_t, int);
template void activation_backward<double>(const ActParams&, const double*, const double*, const double*,
                                          double*, int64_t, int);
}  // namespace minifw
