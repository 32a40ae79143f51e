// Bindings for LRN across channels: (N, C, H*W), window and constants in.
#include "bind_util.h"
#include "cpu/lrn.h"
#include "cpu/parallel.h"
#include "cuda/lrn.h"
#include "registry.h"

namespace minifw {
namespace {

LrnShape to_shape(int64_t N, int64_t C, int64_t HW, int64_t size, double alpha, double beta, double k) {
  checked_product({N, C, HW}, "lrn");
  require(C >= 1 && size >= 1, "lrn: C and size must be >= 1");
  return {N, C, HW, size, alpha, beta, k};
}

template <typename T, typename Device>
void forward(int64_t N, int64_t C, int64_t HW, int64_t size, double alpha, double beta, double k, Array<Device> x,
             Array<Device> y, Array<Device> scale) {
  const LrnShape s = to_shape(N, C, HW, size, alpha, beta, k);
  const T* xp = in_ptr<T>(x, s.elems(), "x");
  T* yp = out_ptr<T>(y, s.elems(), "y");
  T* sp = out_ptr<T>(scale, s.elems(), "scale");
  require_disjoint({{&y, "y"}, {&scale, "scale"}}, {{&x, "x"}});
  void* const stream = Device::stream();
  py::gil_scoped_release release;
  if constexpr (on_cpu<Device>)
    lrn_forward<T>(s, xp, yp, sp, get_num_threads());
  else
    MINIFW_ON_GPU(Device, lrn_forward<T>(s, xp, yp, sp, stream));
}

template <typename T, typename Device>
void backward(int64_t N, int64_t C, int64_t HW, int64_t size, double alpha, double beta, double k, Array<Device> dy,
              Array<Device> x, Array<Device> y, Array<Device> scale, Array<Device> dx) {
  const LrnShape s = to_shape(N, C, HW, size, alpha, beta, k);
  const T* dyp = in_ptr<T>(dy, s.elems(), "dy");
  const T* xp = in_ptr<T>(x, s.elems(), "x");
  const T* yp = in_ptr<T>(y, s.elems(), "y");
  const T* sp = in_ptr<T>(scale, s.elems(), "scale");
  T* dxp = out_ptr<T>(dx, s.elems(), "dx");
  require_disjoint({{&dx, "dx"}}, {{&dy, "dy"}, {&x, "x"}, {&y, "y"}, {&scale, "scale"}});
  void* const stream = Device::stream();
  py::gil_scoped_release release;
  if constexpr (on_cpu<Device>)
    lrn_backward<T>(s, dyp, xp, yp, sp, dxp, get_num_threads());
  else
    MINIFW_ON_GPU(Device, lrn_backward<T>(s, dyp, xp, yp, sp, dxp, stream));
}

template <typename Device>
void bind_on(py::module_& m) {
  def_kernel(m, {"lrn", "forward", Device::name}, &forward<float, Device>, &forward<double, Device>);
  def_kernel(m, {"lrn", "backward", Device::name}, &backward<float, Device>, &backward<double, Device>);
}
}  // namespace

MINIFW_BINDINGS(bind_lrn) {
  MINIFW_BIND_ON_EVERY_DEVICE(bind_on, m);
}
}  // namespace minifw
