// Bindings for 2-D convolution: the algorithm, the problem (a tuple of 15
// ints) and the arrays in; results go into the output arrays, and anything
// wrong raises a Python exception (ValueError, TypeError) before a kernel
// runs. The shape is re-validated here and every array is checked against it
// before a pointer reaches a kernel.
#include <string>

#include "bind_util.h"
#include "cpu/conv.h"
#include "cpu/parallel.h"
#include "cuda/conv.h"
#include "registry.h"

namespace minifw {
namespace {

using ShapeArgs = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                             int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t>;

ConvShape to_shape(const ShapeArgs& a) {
  auto [N, C, H, W, K, Cg, R, S, sh, sw, ph, pw, dh, dw, groups] = a;
  return make_conv_shape(N, C, H, W, K, Cg, R, S, sh, sw, ph, pw, dh, dw, groups);
}

// The algorithms and workspace sizes differ by device: the CPU's, or the CUDA kernels'.
template <typename Device>
bool algo_supports(ConvAlgo algo, ConvDir dir, const ConvShape& s) {
  if constexpr (on_cpu<Device>)
    return conv_algo_supports(algo, dir, s);
  else
    return MINIFW_ON_GPU(Device, conv_supports(algo, dir, s));
}

template <typename Device>
void require_support(ConvAlgo algo, ConvDir dir, const ConvShape& s) {
  if (!algo_supports<Device>(algo, dir, s)) throw py::value_error("algorithm does not support this problem");
}

// (bytes the caller passes as workspace, bytes of GEMM packing buffers the kernel allocates)
template <typename T, typename Device>
ConvWorkspace workspace_sizes(ConvAlgo algo, ConvDir dir, const ConvShape& s) {
  if constexpr (on_cpu<Device>)
    return conv_workspace<T>(algo, dir, s, get_num_threads());
  else
    return {MINIFW_ON_GPU(Device, conv_workspace_bytes<T>(algo, dir, s)), 0};
}

template <typename T, typename Device>
void forward(const std::string& algo_name, const ShapeArgs& args, Array<Device> x, Array<Device> w,
             py::object bias, Array<Device> y, Array<Device> ws) {
  const ConvShape s = to_shape(args);
  const ConvAlgo algo = parse_conv_algo(algo_name);
  require_support<Device>(algo, ConvDir::forward, s);
  const T* xp = in_ptr<T>(x, s.x_size(), "x");
  const T* wp = in_ptr<T>(w, s.w_size(), "w");
  const T* bp = nullptr;
  if (!bias.is_none()) {
    Array<Device> b = array_of<Device>(bias);
    bp = in_ptr<T>(b, s.K, "bias");
  }
  T* yp = out_ptr<T>(y, s.y_size(), "y");
  T* wsp = workspace_ptr<T>(ws, workspace_sizes<T, Device>(algo, ConvDir::forward, s).explicit_bytes);
  void* const stream = Device::stream();
  py::gil_scoped_release release;
  if constexpr (on_cpu<Device>)
    conv_forward<T>(algo, s, xp, wp, bp, yp, wsp, get_num_threads());
  else
    MINIFW_ON_GPU(Device, conv_forward<T>(algo, s, xp, wp, bp, yp, wsp, stream));
}

template <typename T, typename Device>
void backward_data(const std::string& algo_name, const ShapeArgs& args, Array<Device> dy, Array<Device> w,
                   Array<Device> dx, Array<Device> ws) {
  const ConvShape s = to_shape(args);
  const ConvAlgo algo = parse_conv_algo(algo_name);
  require_support<Device>(algo, ConvDir::backward_data, s);
  const T* dyp = in_ptr<T>(dy, s.y_size(), "dy");
  const T* wp = in_ptr<T>(w, s.w_size(), "w");
  T* dxp = out_ptr<T>(dx, s.x_size(), "dx");
  T* wsp = workspace_ptr<T>(ws, workspace_sizes<T, Device>(algo, ConvDir::backward_data, s).explicit_bytes);
  void* const stream = Device::stream();
  py::gil_scoped_release release;
  if constexpr (on_cpu<Device>)
    conv_backward_data<T>(algo, s, dyp, wp, dxp, wsp, get_num_threads());
  else
    MINIFW_ON_GPU(Device, conv_backward_data<T>(algo, s, dyp, wp, dxp, wsp, stream));
}

template <typename T, typename Device>
void backward_filter(const std::string& algo_name, const ShapeArgs& args, Array<Device> x, Array<Device> dy,
                     Array<Device> dw, Array<Device> ws) {
  const ConvShape s = to_shape(args);
  const ConvAlgo algo = parse_conv_algo(algo_name);
  require_support<Device>(algo, ConvDir::backward_filter, s);
  const T* xp = in_ptr<T>(x, s.x_size(), "x");
  const T* dyp = in_ptr<T>(dy, s.y_size(), "dy");
  T* dwp = out_ptr<T>(dw, s.w_size(), "dw");
  T* wsp = workspace_ptr<T>(ws, workspace_sizes<T, Device>(algo, ConvDir::backward_filter, s).explicit_bytes);
  void* const stream = Device::stream();
  py::gil_scoped_release release;
  if constexpr (on_cpu<Device>)
    conv_backward_filter<T>(algo, s, xp, dyp, dwp, wsp, get_num_threads());
  else
    MINIFW_ON_GPU(Device, conv_backward_filter<T>(algo, s, xp, dyp, dwp, wsp, stream));
}

// Caffe's lowering, one image at a time, for the caffe engine on the GPU devices: col is
// the image's lowered matrix (C*R*S rows of Ho*Wo values, every group's channels).
void check_image(const ConvShape& s, int64_t n) {
  if (n < 0 || n >= s.N)
    throw py::value_error("n: expected an image index in [0, " + std::to_string(s.N) + "), got " + std::to_string(n));
}

int64_t col_size(const ConvShape& s) { return checked_product({s.C, s.R, s.S, s.Ho, s.Wo}, "col"); }

template <typename T, typename Device>
void im2col(const ShapeArgs& args, Array<Device> x, int64_t n, Array<Device> col) {
  const ConvShape s = to_shape(args);
  check_image(s, n);
  const T* xp = in_ptr<T>(x, s.x_size(), "x");
  T* colp = out_ptr<T>(col, col_size(s), "col");
  require_disjoint({{&col, "col"}}, {{&x, "x"}});
  void* const stream = Device::stream();
  py::gil_scoped_release release;
  MINIFW_ON_GPU(Device, conv_im2col<T>(s, xp, n, colp, stream));
}

// Writes image n of dx only: the caller gathers a whole batch image by image.
template <typename T, typename Device>
void col2im(const ShapeArgs& args, Array<Device> col, int64_t n, Array<Device> dx) {
  const ConvShape s = to_shape(args);
  check_image(s, n);
  const T* colp = in_ptr<T>(col, col_size(s), "col");
  T* dxp = out_ptr<T>(dx, s.x_size(), "dx");
  require_disjoint({{&dx, "dx"}}, {{&col, "col"}});
  void* const stream = Device::stream();
  py::gil_scoped_release release;
  MINIFW_ON_GPU(Device, conv_col2im<T>(s, colp, n, dxp, stream));
}

template <typename Device>
bool supports(const std::string& algo, const std::string& dir, const ShapeArgs& a) {
  return algo_supports<Device>(parse_conv_algo(algo), parse_conv_dir(dir), to_shape(a));
}

// (bytes the caller passes as workspace, bytes of GEMM packing buffers the kernel allocates)
template <typename T, typename Device>
py::tuple workspace(const std::string& algo, const std::string& dir, const ShapeArgs& a) {
  const ConvWorkspace w = workspace_sizes<T, Device>(parse_conv_algo(algo), parse_conv_dir(dir), to_shape(a));
  return py::make_tuple(w.explicit_bytes, w.pack_bytes);
}

template <typename Device>
void bind_on(py::module_& m) {
  // The queries an algorithm choice needs, listed per dtype and device like the kernels.
  def_kernel(m, {"conv", "supports", Device::name}, &supports<Device>, &supports<Device>);
  def_kernel(m, {"conv", "workspace", Device::name}, &workspace<float, Device>, &workspace<double, Device>);
  def_kernel(m, {"conv", "forward", Device::name}, &forward<float, Device>, &forward<double, Device>);
  def_kernel(m, {"conv", "backward_data", Device::name}, &backward_data<float, Device>,
             &backward_data<double, Device>);
  def_kernel(m, {"conv", "backward_filter", Device::name}, &backward_filter<float, Device>,
             &backward_filter<double, Device>);
  // The CUDA devices only: on the CPU the caffe engine lowers with NumPy (its yardstick is
  // NumPy and OpenBLAS, as Caffe's CPU path is its own im2col and a BLAS).
  if constexpr (!on_cpu<Device>) {
    def_kernel(m, {"conv", "im2col", Device::name}, &im2col<float, Device>, &im2col<double, Device>);
    def_kernel(m, {"conv", "col2im", Device::name}, &col2im<float, Device>, &col2im<double, Device>);
  }
}
}  // namespace

MINIFW_BINDINGS(bind_conv) {
  MINIFW_BIND_ON_EVERY_DEVICE(bind_on, m);
}
}  // namespace minifw
