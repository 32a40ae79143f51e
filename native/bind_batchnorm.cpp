// Bindings for batch normalization: (outer, C, inner), arrays in (optional
// ones as None), running statistics updated in place.
#include "bind_util.h"
#include "cpu/batchnorm.h"
#include "cpu/parallel.h"
#include "cuda/batchnorm.h"
#include "registry.h"

namespace minifw {
namespace {

BnShape to_shape(int64_t outer, int64_t C, int64_t inner) {
  checked_product({outer, C, inner}, "batch_norm");
  require(C >= 1, "batch_norm: C must be >= 1");
  return {outer, C, inner};
}

// The array's data when given (checked for C elements), else null. `keep`
// holds the cast array alive for the duration of the call.
template <typename T, typename Device>
const T* optional_in(const py::object& o, int64_t C, const char* name, Array<Device>& keep) {
  if (o.is_none()) return nullptr;
  keep = array_of<Device>(o);
  return in_ptr<T>(keep, C, name);
}

template <typename T, typename Device>
void forward_training(int64_t outer, int64_t C, int64_t inner, Array<Device> x, py::object weight, py::object bias,
                      py::object running_mean, py::object running_var, double momentum, double eps, Array<Device> y,
                      Array<Device> save_mean, Array<Device> save_invstd) {
  const BnShape s = to_shape(outer, C, inner);
  require(s.per_channel() > 1, "x: batch norm training needs more than one value per channel");
  Array<Device> wk, bk, rmk, rvk;
  const T* xp = in_ptr<T>(x, s.size(), "x");
  const T* wp = optional_in<T, Device>(weight, C, "weight", wk);
  const T* bp = optional_in<T, Device>(bias, C, "bias", bk);
  T* rm = nullptr;
  T* rv = nullptr;
  require(running_mean.is_none() == running_var.is_none(), "running_mean, running_var: give both or neither");
  if (!running_mean.is_none()) {
    rmk = array_of<Device>(running_mean);
    rvk = array_of<Device>(running_var);
    rm = out_ptr<T>(rmk, C, "running_mean");
    rv = out_ptr<T>(rvk, C, "running_var");
  }
  T* yp = out_ptr<T>(y, s.size(), "y");
  T* smp = out_ptr<T>(save_mean, C, "save_mean");
  T* sip = out_ptr<T>(save_invstd, C, "save_invstd");
  require_disjoint({{&y, "y"}, {&save_mean, "save_mean"}, {&save_invstd, "save_invstd"}, {&rmk, "running_mean"},
                    {&rvk, "running_var"}},
                   {{&x, "x"}, {&wk, "weight"}, {&bk, "bias"}});
  void* const stream = Device::stream();
  py::gil_scoped_release release;
  if constexpr (on_cpu<Device>)
    batch_norm_forward_training<T>(s, xp, wp, bp, rm, rv, momentum, eps, yp, smp, sip, get_num_threads());
  else
    MINIFW_ON_GPU(Device, batch_norm_forward_training<T>(s, xp, wp, bp, rm, rv, momentum, eps, yp, smp, sip, stream));
}

template <typename T, typename Device>
void forward_inference(int64_t outer, int64_t C, int64_t inner, Array<Device> x, py::object weight, py::object bias,
                       Array<Device> running_mean, Array<Device> running_var, double eps, Array<Device> y) {
  const BnShape s = to_shape(outer, C, inner);
  Array<Device> wk, bk;
  const T* xp = in_ptr<T>(x, s.size(), "x");
  const T* wp = optional_in<T, Device>(weight, C, "weight", wk);
  const T* bp = optional_in<T, Device>(bias, C, "bias", bk);
  const T* rm = in_ptr<T>(running_mean, C, "running_mean");
  const T* rv = in_ptr<T>(running_var, C, "running_var");
  T* yp = out_ptr<T>(y, s.size(), "y");
  require_disjoint({{&y, "y"}},
                   {{&x, "x"}, {&wk, "weight"}, {&bk, "bias"}, {&running_mean, "running_mean"},
                    {&running_var, "running_var"}});
  void* const stream = Device::stream();
  py::gil_scoped_release release;
  if constexpr (on_cpu<Device>)
    batch_norm_forward_inference<T>(s, xp, wp, bp, rm, rv, eps, yp, get_num_threads());
  else
    MINIFW_ON_GPU(Device, batch_norm_forward_inference<T>(s, xp, wp, bp, rm, rv, eps, yp, stream));
}

template <typename T, typename Device>
void backward(int64_t outer, int64_t C, int64_t inner, Array<Device> dy, Array<Device> x, py::object weight,
              Array<Device> save_mean, Array<Device> save_invstd, Array<Device> dx, Array<Device> dweight, Array<Device> dbias) {
  const BnShape s = to_shape(outer, C, inner);
  Array<Device> wk;
  const T* dyp = in_ptr<T>(dy, s.size(), "dy");
  const T* xp = in_ptr<T>(x, s.size(), "x");
  const T* wp = optional_in<T, Device>(weight, C, "weight", wk);
  const T* smp = in_ptr<T>(save_mean, C, "save_mean");
  const T* sip = in_ptr<T>(save_invstd, C, "save_invstd");
  T* dxp = out_ptr<T>(dx, s.size(), "dx");
  T* dwp = out_ptr<T>(dweight, C, "dweight");
  T* dbp = out_ptr<T>(dbias, C, "dbias");
  require_disjoint({{&dx, "dx"}, {&dweight, "dweight"}, {&dbias, "dbias"}},
                   {{&dy, "dy"}, {&x, "x"}, {&wk, "weight"}, {&save_mean, "save_mean"}, {&save_invstd, "save_invstd"}});
  void* const stream = Device::stream();
  py::gil_scoped_release release;
  if constexpr (on_cpu<Device>)
    batch_norm_backward<T>(s, dyp, xp, wp, smp, sip, dxp, dwp, dbp, get_num_threads());
  else
    MINIFW_ON_GPU(Device, batch_norm_backward<T>(s, dyp, xp, wp, smp, sip, dxp, dwp, dbp, stream));
}

template <typename Device>
void bind_on(py::module_& m) {
  def_kernel(m, {"batch_norm", "forward_training", Device::name}, &forward_training<float, Device>,
             &forward_training<double, Device>);
  def_kernel(m, {"batch_norm", "forward_inference", Device::name}, &forward_inference<float, Device>,
             &forward_inference<double, Device>);
  def_kernel(m, {"batch_norm", "backward", Device::name}, &backward<float, Device>, &backward<double, Device>);
}
}  // namespace

MINIFW_BINDINGS(bind_batchnorm) {
  MINIFW_BIND_ON_EVERY_DEVICE(bind_on, m);
}
}  // namespace minifw
