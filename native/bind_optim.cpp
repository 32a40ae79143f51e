// Bindings for the fused optimizer updates. Every array is updated or read in
// place, so each must already be what the kernel walks: one dtype, p's shape,
// C-contiguous, writable where written, and no two sharing memory.
#include <pybind11/stl.h>

#include <optional>
#include <string>

#include "bind_util.h"
#include "cpu/optim.h"
#include "cpu/parallel.h"
#include "cuda/optim.h"
#include "registry.h"

namespace minifw {
namespace {

template <typename A>
void require_shape_of_p(const A& a, const A& p, const char* name) {
  bool same = a.ndim() == p.ndim();
  for (py::ssize_t d = 0; same && d < p.ndim(); ++d) same = a.shape(d) == p.shape(d);
  require(same, std::string(name) + ": must have p's shape");
}

template <typename T, typename Device>
void sgd_step_entry(Array<Device> p, Array<Device> grad, std::optional<Array<Device>> momentum_buffer, double lr,
                    double momentum, double dampening, double weight_decay, bool nesterov, bool maximize,
                    bool first_step) {
  const int64_t n = static_cast<int64_t>(p.size());
  require_shape_of_p(grad, p, "grad");
  T* pp = out_ptr<T>(p, n, "p");
  const T* gp = in_ptr<T>(grad, n, "grad");
  T* bp = nullptr;
  if (momentum_buffer) {
    require_shape_of_p(*momentum_buffer, p, "momentum_buffer");
    T* const buffer = out_ptr<T>(*momentum_buffer, n, "momentum_buffer");
    require_disjoint({{&p, "p"}, {&*momentum_buffer, "momentum_buffer"}}, {{&grad, "grad"}});
    // "momentum != 0" and keep = 1 - dampening in double, before rounding to T (cpu/optim.h)
    if (momentum != 0) bp = buffer;
  } else {
    require(momentum == 0, "momentum_buffer: required when momentum != 0");
    require_disjoint({{&p, "p"}}, {{&grad, "grad"}});
  }
  void* const stream = Device::stream();
  py::gil_scoped_release release;
  const T keep = static_cast<T>(1.0 - dampening);
  if constexpr (on_cpu<Device>)
    sgd_step<T>(n, pp, gp, bp, static_cast<T>(lr), static_cast<T>(momentum), keep, static_cast<T>(weight_decay),
                nesterov, maximize, first_step, get_num_threads());
  else
    MINIFW_ON_GPU(Device, sgd_step<T>(n, pp, gp, bp, static_cast<T>(lr), static_cast<T>(momentum), keep,
                                      static_cast<T>(weight_decay), nesterov, maximize, first_step, stream));
}

template <typename Device>
void bind_on(py::module_& m) {
  def_kernel(m, {"sgd", "step", Device::name}, &sgd_step_entry<float, Device>, &sgd_step_entry<double, Device>,
             py::arg("p"), py::arg("grad"), py::arg("momentum_buffer"), py::arg("lr"), py::arg("momentum"),
             py::arg("dampening"), py::arg("weight_decay"), py::arg("nesterov"), py::arg("maximize"),
             py::arg("first_step"));
}
}  // namespace

MINIFW_BINDINGS(bind_optim) {
  MINIFW_BIND_ON_EVERY_DEVICE(bind_on, m);
}
}  // namespace minifw
