// Each binding file registers itself, so families of primitives can be added
// without editing a central list.
#pragma once
#include <pybind11/pybind11.h>
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
