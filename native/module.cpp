#include <pybind11/pybind11.h>

#include "cpu/isa.h"
#include "cpu/parallel.h"
#include "cuda/cudasim/api.h"
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
  // The emulator runs blocks on as many threads as the CPU kernels use, at most
  // cudasim::max_workers().
  m.def(
      "set_num_threads",
      [](int n) {
        minifw::set_num_threads(n);
        cudasim::set_workers(minifw::get_num_threads());
      },
      py::arg("n"));
  // OMP_NUM_THREADS beyond the limit would crash the first parallel region: cap it here
  // (minifw.backends warns, reading requested_num_threads_at_start).
  m.attr("requested_num_threads_at_start") = minifw::cap_num_threads();
  m.def("max_num_threads", &minifw::max_num_threads,
        "The largest n set_num_threads takes: max(256, 4 * CPUs), at most OMP_THREAD_LIMIT.");
  cudasim::set_workers(minifw::get_num_threads());
  m.def("cudasim_workers", &cudasim::workers,
        "Workers the emulator runs blocks on: min(get_num_threads(), cudasim_max_workers()).");
  m.def("cudasim_max_workers", &cudasim::max_workers,
        "The most emulator workers: vm.max_map_count / 4096 (15 by default), each keeping fiber stacks.");
  m.attr("cudasim_backend") = cudasim::backend_name();
  // A CUDA kernel that broke a rule of the hardware under the emulator (device "cudasim").
  py::register_exception<cudasim::Fault>(m, "CudaSimError", PyExc_RuntimeError);
  m.def("get_num_threads", &minifw::get_num_threads);
  m.def("set_deterministic", &minifw::set_deterministic, py::arg("on"),
        "Deterministic mode of the CPU kernels: no reduction is split by the thread count.");
  m.def("get_deterministic", &minifw::deterministic);
  m.def("isa", [] { return minifw::isa_name(minifw::active_isa()); });
  m.def("set_isa", [](const std::string& name) { minifw::set_active_isa(minifw::parse_isa(name)); },
        py::arg("name"));
  m.def("supported_isas", [] {
    py::list out;
    for (auto isa : minifw::supported_isas()) out.append(minifw::isa_name(isa));
    return out;
  });
  m.attr("cuda_option") = MINIFW_CUDA_OPTION;  // the build's MINIFW_CUDA: AUTO, ON or OFF
#ifdef MINIFW_WITH_CUDA
  m.attr("has_cuda") = true;
  m.attr("cuda_version") = MINIFW_CUDA_VERSION;              // of the nvcc that built the kernels
  m.attr("cuda_architectures") = MINIFW_CUDA_ARCHITECTURES;  // CMake's list: 80-real = SASS only, 90 = SASS + PTX
#else
  m.attr("has_cuda") = false;
#endif
  m.attr("kernels") = py::dict();  // filled by def_kernel (registry.h)
  for (auto bind : minifw::binders()) bind(m);
}
