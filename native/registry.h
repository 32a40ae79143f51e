// Each binding file registers itself, so families of primitives can be added
// without editing a central list.
#pragma once
#include <pybind11/pybind11.h>

#include <string>
#include <vector>

namespace minifw {
using Binder = void (*)(pybind11::module_&);
std::vector<Binder>& binders();
struct RegisterBindings {
  explicit RegisterBindings(Binder b) { binders().push_back(b); }
};
}  // namespace minifw

// MINIFW_BINDINGS(bind_conv) { m.def(...); }
#define MINIFW_BINDINGS(name)                                         \
  static void name(pybind11::module_& m);                             \
  static ::minifw::RegisterBindings name##_registration(&name);       \
  static void name(pybind11::module_& m)

namespace minifw {
// Where a kernel entry point is listed: (family, direction, device). Python looks
// kernels up by (family, direction, dtype, device) in _native.kernels, never by name.
struct KernelKey {
  const char* family;     // "conv", "pool", "softmax", ...
  const char* direction;  // "forward", "backward_data", ...; "" for a family with one entry (gemm)
  const char* device;     // "cpu" (CUDA kernels will add "cuda" and "cudasim")
};

// Binds the float32 and float64 entry points of one kernel and lists both in
// _native.kernels. The bound names (<family>_<direction>[_<device>]_f32 / _f64, the
// device omitted for "cpu") are what the binding tests call directly.
template <typename F32, typename F64, typename... Extra>
void def_kernel(pybind11::module_& m, KernelKey key, F32&& f32, F64&& f64, const Extra&... extra) {
  std::string name = key.family;
  if (*key.direction) name += std::string("_") + key.direction;
  if (std::string(key.device) != "cpu") name += std::string("_") + key.device;
  pybind11::dict table = m.attr("kernels");
  for (const char* dtype : {"float32", "float64"}) {
    const std::string bound = name + (dtype[5] == '3' ? "_f32" : "_f64");
    if (dtype[5] == '3')
      m.def(bound.c_str(), std::forward<F32>(f32), extra...);
    else
      m.def(bound.c_str(), std::forward<F64>(f64), extra...);
    table[pybind11::make_tuple(key.family, key.direction, dtype, key.device)] = m.attr(bound.c_str());
  }
}
}  // namespace minifw
