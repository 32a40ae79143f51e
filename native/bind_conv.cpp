// Bindings for 2-D convolution: the algorithm, the problem (a tuple of 15
// ints) and the arrays in; results go into the output arrays, and anything
// wrong raises a Python exception (ValueError, TypeError) before a kernel
// runs. The shape is re-validated here and every array is checked against it
// before a pointer reaches a kernel.
#include <string>

#include "bind_util.h"
#include "cpu/conv.h"
#include "cpu/parallel.h"
#include "registry.h"

namespace minifw {
namespace {

using ShapeArgs = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                             int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t>;

ConvShape to_shape(const ShapeArgs& a) {
  auto [N, C, H, W, K, Cg, R, S, sh, sw, ph, pw, dh, dw, groups] = a;
  return make_conv_shape(N, C, H, W, K, Cg, R, S, sh, sw, ph, pw, dh, dw, groups);
}

void require_support(ConvAlgo algo, ConvDir dir, const ConvShape& s) {
  if (!conv_algo_supports(algo, dir, s)) throw py::value_error("algorithm does not support this problem");
}

template <typename T>
void forward(const std::string& algo_name, const ShapeArgs& args, py::array x, py::array w,
             py::object bias, py::array y, py::array ws) {
  const ConvShape s = to_shape(args);
  const ConvAlgo algo = parse_conv_algo(algo_name);
  require_support(algo, ConvDir::forward, s);
  const int nt = get_num_threads();
  const T* xp = in_ptr<T>(x, s.x_size(), "x");
  const T* wp = in_ptr<T>(w, s.w_size(), "w");
  const T* bp = nullptr;
  if (!bias.is_none()) {
    py::array b = bias.cast<py::array>();
    bp = in_ptr<T>(b, s.K, "bias");
  }
  T* yp = out_ptr<T>(y, s.y_size(), "y");
  T* wsp = workspace_ptr<T>(ws, conv_workspace<T>(algo, ConvDir::forward, s, nt).explicit_bytes);
  py::gil_scoped_release release;
  conv_forward<T>(algo, s, xp, wp, bp, yp, wsp, nt);
}

template <typename T>
void backward_data(const std::string& algo_name, const ShapeArgs& args, py::array dy, py::array w,
                   py::array dx, py::array ws) {
  const ConvShape s = to_shape(args);
  const ConvAlgo algo = parse_conv_algo(algo_name);
  require_support(algo, ConvDir::backward_data, s);
  const int nt = get_num_threads();
  const T* dyp = in_ptr<T>(dy, s.y_size(), "dy");
  const T* wp = in_ptr<T>(w, s.w_size(), "w");
  T* dxp = out_ptr<T>(dx, s.x_size(), "dx");
  T* wsp = workspace_ptr<T>(ws, conv_workspace<T>(algo, ConvDir::backward_data, s, nt).explicit_bytes);
  py::gil_scoped_release release;
  conv_backward_data<T>(algo, s, dyp, wp, dxp, wsp, nt);
}

template <typename T>
void backward_filter(const std::string& algo_name, const ShapeArgs& args, py::array x, py::array dy,
                     py::array dw, py::array ws) {
  const ConvShape s = to_shape(args);
  const ConvAlgo algo = parse_conv_algo(algo_name);
  require_support(algo, ConvDir::backward_filter, s);
  const int nt = get_num_threads();
  const T* xp = in_ptr<T>(x, s.x_size(), "x");
  const T* dyp = in_ptr<T>(dy, s.y_size(), "dy");
  T* dwp = out_ptr<T>(dw, s.w_size(), "dw");
  T* wsp = workspace_ptr<T>(ws, conv_workspace<T>(algo, ConvDir::backward_filter, s, nt).explicit_bytes);
  py::gil_scoped_release release;
  conv_backward_filter<T>(algo, s, xp, dyp, dwp, wsp, nt);
}


bool supports(const std::string& algo, const std::string& dir, const ShapeArgs& a) {
  return conv_algo_supports(parse_conv_algo(algo), parse_conv_dir(dir), to_shape(a));
}

// (bytes the caller passes as workspace, bytes of GEMM packing buffers the kernel allocates)
template <typename T>
py::tuple workspace(const std::string& algo, const std::string& dir, const ShapeArgs& a) {
  const ConvWorkspace w = conv_workspace<T>(parse_conv_algo(algo), parse_conv_dir(dir), to_shape(a),
                                            get_num_threads());
  return py::make_tuple(w.explicit_bytes, w.pack_bytes);
}
}  // namespace

MINIFW_BINDINGS(bind_conv) {
  // The queries an algorithm choice needs, listed per dtype and device like the kernels.
  def_kernel(m, {"conv", "supports", "cpu"}, &supports, &supports);
  def_kernel(m, {"conv", "workspace", "cpu"}, &workspace<float>, &workspace<double>);
  def_kernel(m, {"conv", "forward", "cpu"}, &forward<float>, &forward<double>);
  def_kernel(m, {"conv", "backward_data", "cpu"}, &backward_data<float>, &backward_data<double>);
  def_kernel(m, {"conv", "backward_filter", "cpu"}, &backward_filter<float>, &backward_filter<double>);
}
}  // namespace minifw
