// Bindings for the recurrent layers: the mode's name, the sizes as ints, flat
// arrays in (x (T, N, I), states (L*D, N, H), the flat weights and the
// reserve). Cell states are LSTM's only: other modes pass empty arrays.
// The forward also takes `training` (after the sizes): with it the reserve
// has reserve_size() elements, without it none. The forward and the data
// backward take a workspace, bytes from the device's allocator (at least what
// the "workspace" query gives for that direction: the CPU's data backward needs
// none, the CUDA kernels' one lower layer's output gradient).
// lengths, the last argument: int64, empty for "every sequence is T long", or
// N values each in [1, T] (checked here: the kernels index by them). Every
// entry point is bound for each device (OnCpu, OnCudaSim) with the same checks.
#include <stdexcept>
#include <vector>

#include "bind_util.h"
#include "cpu/parallel.h"
#include "cpu/rnn.h"
#include "cuda/rnn.h"
#include "registry.h"

namespace minifw {
namespace {

RnnShape to_shape(const std::string& mode, int64_t input_size, int64_t hidden, int64_t layers, int64_t dirs,
                  bool bias, int64_t T, int64_t N) {
  RnnShape s{};
  try {
    s.mode = rnn_mode_from_name(mode.c_str());
  } catch (const std::invalid_argument& e) {
    throw py::value_error(e.what());
  }
  require(input_size >= 1 && hidden >= 1 && layers >= 1, "rnn: input_size, hidden_size and num_layers must be >= 1");
  require(dirs == 1 || dirs == 2, "rnn: directions must be 1 or 2, got " + std::to_string(dirs));
  checked_product({input_size, hidden, layers, T, N}, "rnn");
  s = RnnShape{s.mode, input_size, hidden, layers, dirs, bias, T, N};
  const int64_t G = s.gates();
  // Bounds on every buffer's size (and so on every offset the kernels form).
  checked_product({layers, dirs, G, hidden, input_size + (dirs + 1) * hidden + 2}, "rnn");
  checked_product({layers, T, N, hidden, dirs * (3 * G + 3)}, "rnn");
  checked_product({T, N, std::max(input_size, dirs * hidden)}, "rnn");
  return s;
}

template <typename Device>
const int64_t* lengths_ptr(const Array<Device>& lengths, const RnnShape& s) {
  if (lengths.size() == 0) return nullptr;
  const int64_t* p = in_ptr<int64_t>(lengths, s.N, "lengths");
  const int64_t* values = p;
  std::vector<int64_t> host;
  if constexpr (!on_cpu<Device>) {  // checked on the host
    host.resize(static_cast<size_t>(s.N));
    read_device<Device>(host.data(), p, sizeof(int64_t) * host.size(), Device::stream());
    values = host.data();
  }
  for (int64_t n = 0; n < s.N; ++n)
    require(values[n] >= 1 && values[n] <= s.T, "lengths: each must be in [1, T=" + std::to_string(s.T) +
                                                    "], got " + std::to_string(values[n]) + " at index " +
                                                    std::to_string(n));
  return p;
}

// Elements of workspace that `direction` ("forward" or "backward_data") takes
// on Device; `training` matters to the forward only.
template <typename Device>
int64_t workspace_elems(const RnnShape& s, const std::string& direction, bool training) {
  if (direction == "forward") {
    if constexpr (on_cpu<Device>)
      return s.forward_workspace(training);
    else
      return MINIFW_ON_GPU(Device, rnn_forward_workspace(s, training));
  }
  if (direction == "backward_data") {
    if constexpr (on_cpu<Device>)
      return 0;  // the CPU kernel allocates its own scratch
    else
      return MINIFW_ON_GPU(Device, rnn_backward_data_workspace(s));
  }
  throw py::value_error("rnn: workspace direction must be 'forward' or 'backward_data', got '" + direction + "'");
}

template <typename T, typename Device>
int64_t workspace(const std::string& mode, int64_t input_size, int64_t hidden, int64_t layers, int64_t dirs,
                  bool bias, int64_t steps, int64_t N, const std::string& direction, bool training) {
  return workspace_elems<Device>(to_shape(mode, input_size, hidden, layers, dirs, bias, steps, N), direction,
                                 training);
}

template <typename T, typename Device>
void forward(const std::string& mode, int64_t input_size, int64_t hidden, int64_t layers, int64_t dirs, bool bias,
             int64_t steps, int64_t N, bool training, Array<Device> x, Array<Device> h0, Array<Device> c0, Array<Device> w,
             Array<Device> y, Array<Device> h_n, Array<Device> c_n, Array<Device> reserve, Array<Device> ws, Array<Device> lengths) {
  const RnnShape s = to_shape(mode, input_size, hidden, layers, dirs, bias, steps, N);
  const T* xp = in_ptr<T>(x, s.x_elems(), "x");
  const T* h0p = in_ptr<T>(h0, s.state_elems(), "h0");
  const T* c0p = in_ptr<T>(c0, s.cell_elems(), "c0");
  const T* wp = in_ptr<T>(w, s.weight_count(), "weights");
  T* yp = out_ptr<T>(y, s.y_elems(), "y");
  T* hnp = out_ptr<T>(h_n, s.state_elems(), "h_n");
  T* cnp = out_ptr<T>(c_n, s.cell_elems(), "c_n");
  T* rp = out_ptr<T>(reserve, training ? s.reserve_size() : 0, "reserve");
  T* wsp = workspace_ptr<T>(ws, sizeof(T) * workspace_elems<Device>(s, "forward", training));
  const int64_t* lp = lengths_ptr<Device>(lengths, s);
  require_disjoint({{&y, "y"}, {&h_n, "h_n"}, {&c_n, "c_n"}, {&reserve, "reserve"}, {&ws, "workspace"}},
                   {{&x, "x"}, {&h0, "h0"}, {&c0, "c0"}, {&w, "weights"}});
  void* const stream = Device::stream();
  py::gil_scoped_release release;
  if constexpr (on_cpu<Device>)
    rnn_forward<T>(s, xp, h0p, c0p, wp, yp, hnp, cnp, training ? rp : nullptr, wsp, lp, get_num_threads());
  else
    MINIFW_ON_GPU(Device, rnn_forward<T>(s, xp, h0p, c0p, wp, yp, hnp, cnp, training ? rp : nullptr, wsp, lp, stream));
}

template <typename T, typename Device>
void backward_data(const std::string& mode, int64_t input_size, int64_t hidden, int64_t layers, int64_t dirs,
                   bool bias, int64_t steps, int64_t N, Array<Device> w, Array<Device> reserve, Array<Device> h0, Array<Device> c0,
                   Array<Device> dy, Array<Device> dh_n, Array<Device> dc_n, Array<Device> dx, Array<Device> dh0, Array<Device> dc0,
                   Array<Device> ws, Array<Device> lengths) {
  const RnnShape s = to_shape(mode, input_size, hidden, layers, dirs, bias, steps, N);
  const T* wp = in_ptr<T>(w, s.weight_count(), "weights");
  T* rp = out_ptr<T>(reserve, s.reserve_size(), "reserve");  // the gate gradients are stored in it
  const T* h0p = in_ptr<T>(h0, s.state_elems(), "h0");
  const T* c0p = in_ptr<T>(c0, s.cell_elems(), "c0");
  const T* dyp = in_ptr<T>(dy, s.y_elems(), "dy");
  const T* dhnp = in_ptr<T>(dh_n, s.state_elems(), "dh_n");
  const T* dcnp = in_ptr<T>(dc_n, s.cell_elems(), "dc_n");
  T* dxp = out_ptr<T>(dx, s.x_elems(), "dx");
  T* dh0p = out_ptr<T>(dh0, s.state_elems(), "dh0");
  T* dc0p = out_ptr<T>(dc0, s.cell_elems(), "dc0");
  T* wsp = workspace_ptr<T>(ws, sizeof(T) * workspace_elems<Device>(s, "backward_data", true));
  const int64_t* lp = lengths_ptr<Device>(lengths, s);
  require_disjoint({{&reserve, "reserve"}, {&dx, "dx"}, {&dh0, "dh0"}, {&dc0, "dc0"}, {&ws, "workspace"}},
                   {{&w, "weights"}, {&h0, "h0"}, {&c0, "c0"}, {&dy, "dy"}, {&dh_n, "dh_n"}, {&dc_n, "dc_n"}});
  void* const stream = Device::stream();
  py::gil_scoped_release release;
  if constexpr (on_cpu<Device>)
    rnn_backward_data<T>(s, wp, rp, h0p, c0p, dyp, dhnp, dcnp, dxp, dh0p, dc0p, lp, get_num_threads());
  else
    MINIFW_ON_GPU(Device, rnn_backward_data<T>(s, wp, rp, h0p, c0p, dyp, dhnp, dcnp, dxp, dh0p, dc0p, wsp, lp, stream));
}

template <typename T, typename Device>
void backward_weights(const std::string& mode, int64_t input_size, int64_t hidden, int64_t layers, int64_t dirs,
                      bool bias, int64_t steps, int64_t N, Array<Device> x, Array<Device> reserve, Array<Device> h0,
                      Array<Device> dw, Array<Device> lengths) {
  const RnnShape s = to_shape(mode, input_size, hidden, layers, dirs, bias, steps, N);
  const T* xp = in_ptr<T>(x, s.x_elems(), "x");
  const T* rp = in_ptr<T>(reserve, s.reserve_size(), "reserve");
  const T* h0p = in_ptr<T>(h0, s.state_elems(), "h0");
  T* dwp = out_ptr<T>(dw, s.weight_count(), "dweights");
  const int64_t* lp = lengths_ptr<Device>(lengths, s);
  require_disjoint({{&dw, "dweights"}}, {{&x, "x"}, {&reserve, "reserve"}, {&h0, "h0"}});
  void* const stream = Device::stream();
  py::gil_scoped_release release;
  if constexpr (on_cpu<Device>)
    rnn_backward_weights<T>(s, xp, rp, h0p, dwp, lp, get_num_threads());
  else
    MINIFW_ON_GPU(Device, rnn_backward_weights<T>(s, xp, rp, h0p, dwp, lp, stream));
}

template <typename Device>
void bind_on(py::module_& m) {
  def_kernel(m, {"rnn", "workspace", Device::name}, &workspace<float, Device>, &workspace<double, Device>);
  def_kernel(m, {"rnn", "forward", Device::name}, &forward<float, Device>, &forward<double, Device>);
  def_kernel(m, {"rnn", "backward_data", Device::name}, &backward_data<float, Device>,
             &backward_data<double, Device>);
  def_kernel(m, {"rnn", "backward_weights", Device::name}, &backward_weights<float, Device>,
             &backward_weights<double, Device>);
}
}  // namespace

MINIFW_BINDINGS(bind_rnn) {
  MINIFW_BIND_ON_EVERY_DEVICE(bind_on, m);
}
}  // namespace minifw
