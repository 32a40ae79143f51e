// Bindings for bias add / bias gradient and the cuDNN-style tensor ops.
// Bias arrays are seen as (outer, C, inner); the tensor ops read their shapes
// from the arrays themselves, so shape and data cannot disagree.
#include <string>
#include <vector>

#include "bind_util.h"
#include "cpu/parallel.h"
#include "cpu/tensor_ops.h"
#include "cuda/tensor_ops.h"
#include "registry.h"

namespace minifw {
namespace {

int64_t bias_elems(int64_t outer, int64_t C, int64_t inner) {
  const int64_t n = checked_product({outer, C, inner}, "bias");
  require(C >= 1, "bias: C must be >= 1");
  return n;
}

template <typename T, typename Device>
void bias_add_entry(int64_t outer, int64_t C, int64_t inner, Array<Device> x, Array<Device> bias, Array<Device> y) {
  const int64_t n = bias_elems(outer, C, inner);
  const T* xp = in_ptr<T>(x, n, "x");
  const T* bp = in_ptr<T>(bias, C, "bias");
  T* yp = out_ptr<T>(y, n, "y");
  require_disjoint({{&y, "y"}}, {{&x, "x"}, {&bias, "bias"}});
  void* const stream = Device::stream();
  py::gil_scoped_release release;
  if constexpr (on_cpu<Device>)
    bias_add<T>(outer, C, inner, xp, bp, yp, get_num_threads());
  else
    MINIFW_ON_GPU(Device, bias_add<T>(outer, C, inner, xp, bp, yp, stream));
}

template <typename T, typename Device>
void bias_backward_entry(int64_t outer, int64_t C, int64_t inner, Array<Device> dy, Array<Device> db) {
  const int64_t n = bias_elems(outer, C, inner);
  const T* dyp = in_ptr<T>(dy, n, "dy");
  T* dbp = out_ptr<T>(db, C, "db");
  require_disjoint({{&db, "db"}}, {{&dy, "dy"}});
  void* const stream = Device::stream();
  py::gil_scoped_release release;
  if constexpr (on_cpu<Device>)
    bias_backward<T>(outer, C, inner, dyp, dbp, get_num_threads());
  else
    MINIFW_ON_GPU(Device, bias_backward<T>(outer, C, inner, dyp, dbp, stream));
}

template <typename T, typename Device>
void add_tensor_entry(Array<Device> a, Array<Device> c, Array<Device> out, double alpha, double beta) {
  const int ndim = static_cast<int>(c.ndim());
  require(ndim <= 8 && a.ndim() == ndim && out.ndim() == ndim, "a, c, out: at most 8 dimensions, all of c's rank");
  std::vector<int64_t> shape(ndim), a_shape(ndim);
  for (int d = 0; d < ndim; ++d) {
    shape[d] = c.shape(d);
    a_shape[d] = a.shape(d);
    require(a_shape[d] == shape[d] || a_shape[d] == 1, "a: must broadcast to c's shape");
    require(out.shape(d) == shape[d], "out: must have c's shape");
  }
  const T* ap = in_ptr<T>(a, static_cast<int64_t>(a.size()), "a");
  const T* cp = in_ptr<T>(c, static_cast<int64_t>(c.size()), "c");
  T* op = out_ptr<T>(out, static_cast<int64_t>(c.size()), "out");
  require_disjoint({{&out, "out"}}, {{&a, "a"}, {&c, "c"}});
  void* const stream = Device::stream();
  py::gil_scoped_release release;
  if constexpr (on_cpu<Device>)
    add_tensor<T>(ndim, shape.data(), a_shape.data(), ap, cp, op, static_cast<T>(alpha), static_cast<T>(beta),
                  get_num_threads());
  else
    MINIFW_ON_GPU(Device, add_tensor<T>(ndim, shape.data(), a_shape.data(), ap, cp, op, static_cast<T>(alpha),
                           static_cast<T>(beta), stream));
}

template <typename T, typename Device>
void scale_tensor_entry(Array<Device> x, Array<Device> y, double alpha) {
  const int64_t n = static_cast<int64_t>(x.size());
  const T* xp = in_ptr<T>(x, n, "x");
  T* yp = out_ptr<T>(y, n, "y");
  require_disjoint({{&y, "y"}}, {{&x, "x"}});
  void* const stream = Device::stream();
  py::gil_scoped_release release;
  if constexpr (on_cpu<Device>)
    scale_tensor<T>(xp, yp, n, static_cast<T>(alpha), get_num_threads());
  else
    MINIFW_ON_GPU(Device, scale_tensor<T>(xp, yp, n, static_cast<T>(alpha), stream));
}

// The host only (embedding_backward_f32 / _f64): dw = 0, then dw[indices[p]] += g[p].
template <typename T>
void embedding_backward_entry(py::array indices, py::array g, py::array dw) {
  require(g.ndim() == 2 && dw.ndim() == 2 && indices.ndim() == 1,
          "embedding_backward: indices must be 1-D, g and dw 2-D");
  const int64_t P = indices.shape(0), E = g.shape(1), V = dw.shape(0);
  require(g.shape(0) == P, "embedding_backward: g must have a row per index");
  require(dw.shape(1) == E, "embedding_backward: dw must have g's columns");
  const int64_t* ip = in_ptr<int64_t>(indices, P, "indices");
  const T* gp = in_ptr<T>(g, checked_product({P, E}, "g"), "g");
  T* dwp = out_ptr<T>(dw, checked_product({V, E}, "dw"), "dw");
  require_disjoint({{&dw, "dw"}}, {{&indices, "indices"}, {&g, "g"}});
  py::gil_scoped_release release;
  for (int64_t p = 0; p < P; ++p)
    if (ip[p] < 0 || ip[p] >= V)
      throw py::value_error("embedding_backward: indices[" + std::to_string(p) + "] = " + std::to_string(ip[p]) +
                            " is outside [0, " + std::to_string(V) + ")");
  rows_summed_by_index<T>(P, E, V, ip, gp, dwp, get_num_threads());
}

template <typename Device>
void bind_on(py::module_& m) {
  def_kernel(m, {"bias", "add", Device::name}, &bias_add_entry<float, Device>, &bias_add_entry<double, Device>);
  def_kernel(m, {"bias", "backward", Device::name}, &bias_backward_entry<float, Device>,
             &bias_backward_entry<double, Device>);
  def_kernel(m, {"tensor", "add", Device::name}, &add_tensor_entry<float, Device>,
             &add_tensor_entry<double, Device>);
  def_kernel(m, {"tensor", "scale", Device::name}, &scale_tensor_entry<float, Device>,
             &scale_tensor_entry<double, Device>);
}
}  // namespace

MINIFW_BINDINGS(bind_tensor_ops) {
  MINIFW_BIND_ON_EVERY_DEVICE(bind_on, m);
  m.def("embedding_backward_f32", &embedding_backward_entry<float>);
  m.def("embedding_backward_f64", &embedding_backward_entry<double>);
}
}  // namespace minifw
