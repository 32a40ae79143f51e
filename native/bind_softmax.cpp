// Bindings for softmax, log-softmax and cross-entropy. Shapes arrive as
// (outer, C, inner); every array is checked against them.
#include <string>

#include "bind_util.h"
#include "cpu/parallel.h"
#include "cpu/softmax.h"
#include "cuda/softmax.h"
#include "registry.h"

namespace minifw {
namespace {

SoftmaxShape to_shape(int64_t outer, int64_t C, int64_t inner) {
  checked_product({outer, C, inner}, "softmax");
  require(C >= 1, "softmax: C must be >= 1");
  return {outer, C, inner};
}

template <typename T, typename Device>
void forward(int64_t outer, int64_t C, int64_t inner, Array<Device> x, Array<Device> y, bool log) {
  const SoftmaxShape s = to_shape(outer, C, inner);
  const T* xp = in_ptr<T>(x, s.size(), "x");
  T* yp = out_ptr<T>(y, s.size(), "y");
  require_disjoint({{&y, "y"}}, {{&x, "x"}});
  void* const stream = Device::stream();
  py::gil_scoped_release release;
  if constexpr (on_cpu<Device>)
    softmax_forward<T>(s, xp, yp, log, get_num_threads());
  else
    MINIFW_ON_GPU(Device, softmax_forward<T>(s, xp, yp, log, stream));
}

template <typename T, typename Device>
void backward(int64_t outer, int64_t C, int64_t inner, Array<Device> dy, Array<Device> y, Array<Device> dx, bool log) {
  const SoftmaxShape s = to_shape(outer, C, inner);
  const T* dyp = in_ptr<T>(dy, s.size(), "dy");
  const T* yp = in_ptr<T>(y, s.size(), "y");
  T* dxp = out_ptr<T>(dx, s.size(), "dx");
  require_disjoint({{&dx, "dx"}}, {{&dy, "dy"}, {&y, "y"}});
  void* const stream = Device::stream();
  py::gil_scoped_release release;
  if constexpr (on_cpu<Device>)
    softmax_backward<T>(s, dyp, yp, dxp, log, get_num_threads());
  else
    MINIFW_ON_GPU(Device, softmax_backward<T>(s, dyp, yp, dxp, log, stream));
}

void bad_target(int64_t pos) {
  if (pos >= 0)
    throw py::value_error("target: value at flat position " + std::to_string(pos) +
                          " is neither a class index in [0, C) nor ignore_index");
}

// Returns (sum of per-position losses, number of non-ignored targets).
template <typename T, typename Device>
py::tuple ce_forward(int64_t outer, int64_t C, int64_t inner, Array<Device> logits, Array<Device> target,
                     int64_t ignore_index, double label_smoothing, Array<Device> log_probs, Array<Device> losses) {
  const SoftmaxShape s = to_shape(outer, C, inner);
  const T* xp = in_ptr<T>(logits, s.size(), "logits");
  const int64_t* tp = in_ptr<int64_t>(target, s.positions(), "target");
  T* lpp = out_ptr<T>(log_probs, s.size(), "log_probs");
  T* lp = out_ptr<T>(losses, s.positions(), "losses");
  require_disjoint({{&log_probs, "log_probs"}, {&losses, "losses"}}, {{&logits, "logits"}, {&target, "target"}});
  void* const stream = Device::stream();
  CrossEntropySums r;
  if constexpr (on_cpu<Device>) {
    py::gil_scoped_release release;
    r = cross_entropy_forward<T>(s, xp, tp, ignore_index, label_smoothing, lpp, lp, get_num_threads());
  } else {  // the kernels leave the sums in device memory
    DeviceScratch<Device> sums(sizeof r, stream);
    py::gil_scoped_release release;
    MINIFW_ON_GPU(Device, cross_entropy_forward<T>(s, xp, tp, ignore_index, label_smoothing, lpp, lp,
                                                   sums.template as<CrossEntropySums>(), stream));
    read_device<Device>(&r, sums.template as<CrossEntropySums>(), sizeof r, stream);
  }
  bad_target(r.bad_position);
  return py::make_tuple(r.loss_sum, r.count);
}

template <typename T, typename Device>
void ce_backward(int64_t outer, int64_t C, int64_t inner, Array<Device> log_probs, Array<Device> target,
                 int64_t ignore_index, double label_smoothing, py::object grad, double grad_scalar,
                 bool divide_by_count, Array<Device> dlogits) {
  const SoftmaxShape s = to_shape(outer, C, inner);
  const T* lpp = in_ptr<T>(log_probs, s.size(), "log_probs");
  const int64_t* tp = in_ptr<int64_t>(target, s.positions(), "target");
  const T* gp = nullptr;
  Array<Device> ga;
  if (!grad.is_none()) {
    ga = array_of<Device>(grad);
    gp = in_ptr<T>(ga, s.positions(), "grad_loss");
  }
  T* dp = out_ptr<T>(dlogits, s.size(), "dlogits");
  require_disjoint({{&dlogits, "dlogits"}}, {{&log_probs, "log_probs"}, {&target, "target"}, {&ga, "grad_loss"}});
  void* const stream = Device::stream();
  int64_t bad;
  if constexpr (on_cpu<Device>) {
    py::gil_scoped_release release;
    bad = cross_entropy_backward<T>(s, lpp, tp, ignore_index, label_smoothing, gp, grad_scalar, divide_by_count,
                                    dp, get_num_threads());
  } else {
    DeviceScratch<Device> sums(sizeof(CrossEntropySums), stream);
    CrossEntropySums r;
    py::gil_scoped_release release;
    MINIFW_ON_GPU(Device, cross_entropy_backward<T>(s, lpp, tp, ignore_index, label_smoothing, gp, grad_scalar,
                                                    divide_by_count, dp, sums.template as<CrossEntropySums>(),
                                                    stream));
    read_device<Device>(&r, sums.template as<CrossEntropySums>(), sizeof r, stream);
    bad = r.bad_position;
  }
  bad_target(bad);
}

template <typename Device>
void bind_on(py::module_& m) {
  def_kernel(m, {"softmax", "forward", Device::name}, &forward<float, Device>, &forward<double, Device>);
  def_kernel(m, {"softmax", "backward", Device::name}, &backward<float, Device>, &backward<double, Device>);
  def_kernel(m, {"cross_entropy", "forward", Device::name}, &ce_forward<float, Device>, &ce_forward<double, Device>);
  def_kernel(m, {"cross_entropy", "backward", Device::name}, &ce_backward<float, Device>,
             &ce_backward<double, Device>);
}
}  // namespace

MINIFW_BINDINGS(bind_softmax) {
  MINIFW_BIND_ON_EVERY_DEVICE(bind_on, m);
}
}  // namespace minifw
