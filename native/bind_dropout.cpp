// Bindings for dropout: arrays, p and the 64-bit seed in.
#include "bind_util.h"
#include "cpu/dropout.h"
#include "cpu/parallel.h"
#include "cuda/dropout.h"
#include "registry.h"

namespace minifw {
namespace {
template <typename T, typename Device>
void forward(py::array x, double p, uint64_t seed, py::array y, py::array mask) {
  require(p >= 0 && p <= 1, "p: must be in [0, 1]");
  const int64_t n = static_cast<int64_t>(x.size());
  const T* xp = in_ptr<T>(x, n, "x");
  T* yp = out_ptr<T>(y, n, "y");
  uint8_t* mp = out_ptr<uint8_t>(mask, n, "mask");
  require_disjoint({{&y, "y"}, {&mask, "mask"}}, {{&x, "x"}});
  py::gil_scoped_release release;
  if constexpr (on_cpu<Device>)
    dropout_forward<T>(xp, yp, mp, n, p, seed, get_num_threads());
  else
    cudasim::dropout_forward<T>(xp, yp, mp, n, p, seed, nullptr);
}

template <typename T, typename Device>
void backward(py::array dy, py::array mask, double p, py::array dx) {
  require(p >= 0 && p <= 1, "p: must be in [0, 1]");
  const int64_t n = static_cast<int64_t>(dy.size());
  const T* dyp = in_ptr<T>(dy, n, "dy");
  const uint8_t* mp = in_ptr<uint8_t>(mask, n, "mask");
  T* dxp = out_ptr<T>(dx, n, "dx");
  require_disjoint({{&dx, "dx"}}, {{&dy, "dy"}, {&mask, "mask"}});
  py::gil_scoped_release release;
  if constexpr (on_cpu<Device>)
    dropout_backward<T>(dyp, mp, dxp, n, p, get_num_threads());
  else
    cudasim::dropout_backward<T>(dyp, mp, dxp, n, p, nullptr);
}

template <typename Device>
void bind_on(py::module_& m) {
  def_kernel(m, {"dropout", "forward", Device::name}, &forward<float, Device>, &forward<double, Device>);
  def_kernel(m, {"dropout", "backward", Device::name}, &backward<float, Device>, &backward<double, Device>);
}
}  // namespace

MINIFW_BINDINGS(bind_dropout) {
  bind_on<OnCpu>(m);
  bind_on<OnCudaSim>(m);
}
}  // namespace minifw
