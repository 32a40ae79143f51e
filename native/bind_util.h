// Checks made at the binding boundary. Python validates first and gives the
// user-facing message; these checks are the last line of defence so that no
// pointer reaches a kernel unless its dtype, layout and size are what the
// kernel will touch.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>

namespace minifw {
namespace py = pybind11;

template <typename T>
inline void check_array(const py::array& a, int64_t expected_elems, const char* name, bool writable) {
  if (!a.dtype().is(py::dtype::of<T>()))
    throw py::type_error(std::string(name) + ": expected dtype " +
                         std::string(py::str(py::dtype::of<T>())) + ", got " +
                         std::string(py::str(a.dtype())));
  if (!(a.flags() & py::array::c_style))
    throw py::value_error(std::string(name) + ": expected a C-contiguous array");
  if (writable && !a.writeable())
    throw py::value_error(std::string(name) + ": expected a writable array");
  if (static_cast<int64_t>(a.size()) != expected_elems)
    throw py::value_error(std::string(name) + ": expected " + std::to_string(expected_elems) +
                          " elements, got " + std::to_string(a.size()));
}

template <typename T>
inline const T* in_ptr(const py::array& a, int64_t expected_elems, const char* name) {
  check_array<T>(a, expected_elems, name, false);
  return static_cast<const T*>(a.data());
}

template <typename T>
inline T* out_ptr(py::array& a, int64_t expected_elems, const char* name) {
  check_array<T>(a, expected_elems, name, true);
  return static_cast<T*>(a.mutable_data());
}

inline void require(bool ok, const std::string& what) {
  if (!ok) throw py::value_error(what);
}
}  // namespace minifw
