// Bindings for 2-D pooling: geometry in (a tuple of 11 ints + ceil_mode), arrays
// in. The shape is re-validated here and every array checked against it.
#include <string>

#include "bind_util.h"
#include "cpu/parallel.h"
#include "cpu/pooling.h"
#include "cuda/pooling.h"
#include "registry.h"

namespace minifw {
namespace {

using ShapeArgs = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                             int64_t, bool>;

PoolShape to_shape(const ShapeArgs& a) {
  auto [N, C, H, W, kh, kw, sh, sw, ph, pw, ceil_mode] = a;
  // Bounded before make_pool_shape forms H + 2 * ph, N * C * H * W, ...
  checked_product({N, C, H, W}, "pooling: x");
  for (int64_t v : {kh, kw, sh, sw, ph, pw}) checked_product({v}, "pooling: kernel, stride, padding");
  const PoolShape s = make_pool_shape(N, C, H, W, kh, kw, sh, sw, ph, pw, ceil_mode);
  checked_product({N, C, s.Ho, s.Wo}, "pooling: y");
  return s;
}

PoolMode parse_mode(const std::string& mode) {
  if (mode == "max") return PoolMode::max;
  if (mode == "avg_include_pad") return PoolMode::avg_include_pad;
  if (mode == "avg_exclude_pad") return PoolMode::avg_exclude_pad;
  throw py::value_error("unknown pooling mode '" + mode + "'");
}

template <typename T, typename Device>
void forward(const std::string& mode, const ShapeArgs& args, py::array x, py::array y, py::object indices) {
  const PoolShape s = to_shape(args);
  const PoolMode m = parse_mode(mode);
  const T* xp = in_ptr<T>(x, s.x_size(), "x");
  T* yp = out_ptr<T>(y, s.y_size(), "y");
  int64_t* ip = nullptr;
  py::array ia;
  if (!indices.is_none()) {
    require(m == PoolMode::max, "indices: only max pooling has indices");
    ia = indices.cast<py::array>();
    ip = out_ptr<int64_t>(ia, s.y_size(), "indices");
  }
  require_disjoint({{&y, "y"}, {&ia, "indices"}}, {{&x, "x"}});
  py::gil_scoped_release release;
  if constexpr (on_cpu<Device>)
    pool_forward<T>(s, m, xp, yp, ip, get_num_threads());
  else
    cudasim::pool_forward<T>(s, m, xp, yp, ip, nullptr);
}

template <typename T, typename Device>
void backward(const std::string& mode, const ShapeArgs& args, py::array dy, py::object indices, py::array dx) {
  const PoolShape s = to_shape(args);
  const PoolMode m = parse_mode(mode);
  const T* dyp = in_ptr<T>(dy, s.y_size(), "dy");
  const int64_t* ip = nullptr;
  py::array ia;
  if (m == PoolMode::max) {
    require(!indices.is_none(), "indices: required for max pooling backward");
    ia = indices.cast<py::array>();
    ip = in_ptr<int64_t>(ia, s.y_size(), "indices");
  }
  T* dxp = out_ptr<T>(dx, s.x_size(), "dx");
  require_disjoint({{&dx, "dx"}}, {{&dy, "dy"}, {&ia, "indices"}});
  int64_t bad;
  {
    py::gil_scoped_release release;
    if constexpr (on_cpu<Device>) {
      bad = pool_backward<T>(s, m, dyp, ip, dxp, get_num_threads());
    } else {
      long long status[kPoolStatusWords];  // host memory is the emulator's device memory
      cudasim::pool_backward<T>(s, m, dyp, ip, dxp, status, nullptr);
      bad = pool_first_bad_position(status);
    }
  }
  if (bad >= 0)
    throw py::value_error("indices: value " + std::to_string(static_cast<const int64_t*>(ia.data())[bad]) +
                          " at flat position " + std::to_string(bad) + " is outside the input plane [0, " +
                          std::to_string(s.H * s.W) + ")");
}

template <typename Device>
void bind_on(py::module_& m) {
  def_kernel(m, {"pool", "forward", Device::name}, &forward<float, Device>, &forward<double, Device>);
  def_kernel(m, {"pool", "backward", Device::name}, &backward<float, Device>, &backward<double, Device>);
}
}  // namespace

MINIFW_BINDINGS(bind_pooling) {
  bind_on<OnCpu>(m);
  bind_on<OnCudaSim>(m);
}
}  // namespace minifw
