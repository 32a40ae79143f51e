// Bindings for 2-D pooling: geometry in (a tuple of 12 ints + ceil_mode), arrays
// in. The shape is re-validated here and every array checked against it.
#include <string>

#include "bind_util.h"
#include "cpu/parallel.h"
#include "cpu/pooling.h"
#include "cuda/pooling.h"
#include "registry.h"

namespace minifw {
namespace {

// (N, C, H, W, kh, kw, sh, sw, ph, pw, dh, dw, ceil_mode)
using ShapeArgs = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                             int64_t, int64_t, int64_t, bool>;

PoolShape to_shape(const ShapeArgs& a) {
  auto [N, C, H, W, kh, kw, sh, sw, ph, pw, dh, dw, ceil_mode] = a;
  // Bounded before make_pool_shape forms H + 2 * ph, N * C * H * W, ...
  checked_product({N, C, H, W}, "pooling: x");
  for (int64_t v : {kh, kw, sh, sw, ph, pw, dh, dw})
    checked_product({v}, "pooling: kernel, stride, padding, dilation");
  const PoolShape s = make_pool_shape(N, C, H, W, kh, kw, sh, sw, ph, pw, dh, dw, ceil_mode);
  checked_product({N, C, s.Ho, s.Wo}, "pooling: y");
  return s;
}

// The mode, checked against the shape: only max pooling is dilated.
PoolMode parse_mode(const std::string& mode, const PoolShape& s) {
  PoolMode m;
  if (mode == "max") m = PoolMode::max;
  else if (mode == "avg_include_pad") m = PoolMode::avg_include_pad;
  else if (mode == "avg_exclude_pad") m = PoolMode::avg_exclude_pad;
  else throw py::value_error("unknown pooling mode '" + mode + "'");
  require(m == PoolMode::max || (s.dh == 1 && s.dw == 1), "dilation: average pooling takes none (1, 1)");
  return m;
}

template <typename T, typename Device>
void forward(const std::string& mode, const ShapeArgs& args, Array<Device> x, Array<Device> y, py::object indices) {
  const PoolShape s = to_shape(args);
  const PoolMode m = parse_mode(mode, s);
  const T* xp = in_ptr<T>(x, s.x_size(), "x");
  T* yp = out_ptr<T>(y, s.y_size(), "y");
  int64_t* ip = nullptr;
  Array<Device> ia;
  if (!indices.is_none()) {
    require(m == PoolMode::max, "indices: only max pooling has indices");
    ia = array_of<Device>(indices);
    ip = out_ptr<int64_t>(ia, s.y_size(), "indices");
  }
  require_disjoint({{&y, "y"}, {&ia, "indices"}}, {{&x, "x"}});
  void* const stream = Device::stream();
  py::gil_scoped_release release;
  if constexpr (on_cpu<Device>)
    pool_forward<T>(s, m, xp, yp, ip, get_num_threads());
  else
    MINIFW_ON_GPU(Device, pool_forward<T>(s, m, xp, yp, ip, stream));
}

template <typename T, typename Device>
void backward(const std::string& mode, const ShapeArgs& args, Array<Device> dy, py::object indices, Array<Device> dx) {
  const PoolShape s = to_shape(args);
  const PoolMode m = parse_mode(mode, s);
  const T* dyp = in_ptr<T>(dy, s.y_size(), "dy");
  const int64_t* ip = nullptr;
  Array<Device> ia;
  if (m == PoolMode::max) {
    require(!indices.is_none(), "indices: required for max pooling backward");
    ia = array_of<Device>(indices);
    ip = in_ptr<int64_t>(ia, s.y_size(), "indices");
  }
  T* dxp = out_ptr<T>(dx, s.x_size(), "dx");
  require_disjoint({{&dx, "dx"}}, {{&dy, "dy"}, {&ia, "indices"}});
  void* const stream = Device::stream();
  int64_t bad;
  if constexpr (on_cpu<Device>) {
    py::gil_scoped_release release;
    bad = pool_backward<T>(s, m, dyp, ip, dxp, get_num_threads());
  } else {
    long long status[kPoolStatusWords];
    DeviceScratch<Device> device_status(sizeof status, stream);
    {
      py::gil_scoped_release release;
      MINIFW_ON_GPU(Device, pool_backward<T>(s, m, dyp, ip, dxp, device_status.template as<long long>(), stream));
      read_device<Device>(status, device_status.template as<long long>(), sizeof status, stream);
    }
    bad = pool_first_bad_position(status);
  }
  if (bad >= 0) {
    int64_t value;
    if constexpr (on_cpu<Device>)
      value = ip[bad];
    else
      read_device<Device>(&value, ip + bad, sizeof value, stream);
    throw py::value_error("indices: value " + std::to_string(value) + " at flat position " + std::to_string(bad) +
                          " is outside the input plane [0, " + std::to_string(s.H * s.W) + ")");
  }
}

template <typename Device>
void bind_on(py::module_& m) {
  def_kernel(m, {"pool", "forward", Device::name}, &forward<float, Device>, &forward<double, Device>);
  def_kernel(m, {"pool", "backward", Device::name}, &backward<float, Device>, &backward<double, Device>);
}
}  // namespace

MINIFW_BINDINGS(bind_pooling) {
  MINIFW_BIND_ON_EVERY_DEVICE(bind_on, m);
}
}  // namespace minifw
