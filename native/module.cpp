#include <pybind11/pybind11.h>

#include "cpu/isa.h"
#include "cpu/parallel.h"
#include "registry.h"

namespace py = pybind11;

namespace minifw {
std::vector<Binder>& binders() {
  static std::vector<Binder> all;
  return all;
}
}  // namespace minifw

PYBIND11_MODULE(_native, m) {
  m.doc() = "minifw native primitives (C++ CPU kernels, CUDA kernels when built)";
  m.def("set_num_threads", &minifw::set_num_threads, py::arg("n"));
  m.def("get_num_threads", &minifw::get_num_threads);
  m.def("isa", [] { return minifw::isa_name(minifw::active_isa()); });
  m.def("set_isa", [](const std::string& name) { minifw::set_active_isa(minifw::parse_isa(name)); },
        py::arg("name"));
  m.def("supported_isas", [] {
    py::list out;
    for (auto isa : minifw::supported_isas()) out.append(minifw::isa_name(isa));
    return out;
  });
#ifdef MINIFW_WITH_CUDA
  m.attr("has_cuda") = true;
#else
  m.attr("has_cuda") = false;
#endif
  m.attr("kernels") = py::dict();  // filled by def_kernel (registry.h)
  for (auto bind : minifw::binders()) bind(m);
}
