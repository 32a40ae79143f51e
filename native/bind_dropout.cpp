// Bindings for dropout: arrays, p and the 64-bit seed in.
#include "bind_util.h"
#include "cpu/dropout.h"
#include "cpu/parallel.h"
#include "cuda/dropout.h"
#include "registry.h"

namespace minifw {
namespace {
template <typename T, typename Device>
void forward(Array<Device> x, double p, uint64_t seed, Array<Device> y, Array<Device> mask) {
  require(p >= 0 && p <= 1, "p: must be in [0, 1]");
  const int64_t n = static_cast<int64_t>(x.size());
  const T* xp = in_ptr<T>(x, n, "x");
  T* yp = out_ptr<T>(y, n, "y");
  uint8_t* mp = out_ptr<uint8_t>(mask, n, "mask");
  require_disjoint({{&y, "y"}, {&mask, "mask"}}, {{&x, "x"}});
  void* const stream = Device::stream();
  py::gil_scoped_release release;
  if constexpr (on_cpu<Device>)
    dropout_forward<T>(xp, yp, mp, n, p, seed, get_num_threads());
  else
    MINIFW_ON_GPU(Device, dropout_forward<T>(xp, yp, mp, n, p, seed, stream));
}

template <typename T, typename Device>
void backward(Array<Device> dy, Array<Device> mask, double p, Array<Device> dx) {
  require(p >= 0 && p <= 1, "p: must be in [0, 1]");
  const int64_t n = static_cast<int64_t>(dy.size());
  const T* dyp = in_ptr<T>(dy, n, "dy");
  const uint8_t* mp = in_ptr<uint8_t>(mask, n, "mask");
  T* dxp = out_ptr<T>(dx, n, "dx");
  require_disjoint({{&dx, "dx"}}, {{&dy, "dy"}, {&mask, "mask"}});
  void* const stream = Device::stream();
  py::gil_scoped_release release;
  if constexpr (on_cpu<Device>)
    dropout_backward<T>(dyp, mp, dxp, n, p, get_num_threads());
  else
    MINIFW_ON_GPU(Device, dropout_backward<T>(dyp, mp, dxp, n, p, stream));
}

template <typename Device>
void bind_on(py::module_& m) {
  def_kernel(m, {"dropout", "forward", Device::name}, &forward<float, Device>, &forward<double, Device>);
  def_kernel(m, {"dropout", "backward", Device::name}, &backward<float, Device>, &backward<double, Device>);
}
}  // namespace

MINIFW_BINDINGS(bind_dropout) {
  MINIFW_BIND_ON_EVERY_DEVICE(bind_on, m);
}
}  // namespace minifw
