// Bindings for the activations: mode and parameters in, arrays in, nothing out.
#include <string>

#include "bind_util.h"
#include "cpu/activation.h"
#include "cpu/parallel.h"
#include "cuda/activation.h"
#include "registry.h"

namespace minifw {
namespace {

template <typename T, typename Device>
void forward(const std::string& mode, Array<Device> x, Array<Device> y, double negative_slope, double alpha) {
  const ActParams p{parse_act_mode(mode), negative_slope, alpha};
  const int64_t n = static_cast<int64_t>(x.size());
  const T* xp = in_ptr<T>(x, n, "x");
  T* yp = out_ptr<T>(y, n, "y");
  // In place (y is x) is supported: each element is read before it is written.
  if (yp != xp) require_disjoint({{&y, "y"}}, {{&x, "x"}});
  void* const stream = Device::stream();
  py::gil_scoped_release release;
  if constexpr (on_cpu<Device>)
    activation_forward<T>(p, xp, yp, n, get_num_threads());
  else
    MINIFW_ON_GPU(Device, activation_forward<T>(p, xp, yp, n, stream));
}

template <typename T, typename Device>
void backward(const std::string& mode, Array<Device> dy, Array<Device> y, py::object x, Array<Device> dx,
              double negative_slope, double alpha) {
  const ActParams p{parse_act_mode(mode), negative_slope, alpha};
  const int64_t n = static_cast<int64_t>(y.size());
  const T* dyp = in_ptr<T>(dy, n, "dy");
  const T* yp = in_ptr<T>(y, n, "y");
  const T* xp = nullptr;
  Array<Device> xa;
  if (!x.is_none()) {
    xa = array_of<Device>(x);
    xp = in_ptr<T>(xa, n, "x");
  }
  // x given or not, not its pointer: CuPy's empty arrays have none
  require(!x.is_none() || !activation_backward_needs_x(p), "x: required for " + mode + " with this parameter");
  T* dxp = out_ptr<T>(dx, n, "dx");
  require_disjoint({{&dx, "dx"}}, {{&dy, "dy"}, {&y, "y"}, {&xa, "x"}});
  if (n == 0) return;
  void* const stream = Device::stream();
  py::gil_scoped_release release;
  if constexpr (on_cpu<Device>)
    activation_backward<T>(p, dyp, yp, xp, dxp, n, get_num_threads());
  else
    MINIFW_ON_GPU(Device, activation_backward<T>(p, dyp, yp, xp, dxp, n, stream));
}

template <typename Device>
void bind_on(py::module_& m) {
  def_kernel(m, {"activation", "forward", Device::name}, &forward<float, Device>, &forward<double, Device>);
  def_kernel(m, {"activation", "backward", Device::name}, &backward<float, Device>, &backward<double, Device>);
}
}  // namespace

MINIFW_BINDINGS(bind_activation) {
  MINIFW_BIND_ON_EVERY_DEVICE(bind_on, m);
}
}  // namespace minifw
