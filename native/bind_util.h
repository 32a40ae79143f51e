// Checks made at the binding boundary. Python validates first and gives the
// user-facing message; these checks are the last line of defence so that no
// pointer reaches a kernel unless its dtype, layout and size are what the
// kernel will touch.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <type_traits>

namespace minifw {
namespace py = pybind11;

// Where a binding sends the pointers it has checked: the CPU kernels (cpu/), or
// the CUDA launchers compiled for the emulator (device "cudasim", host memory).
// One binding function per entry point, templated on the device, keeps the
// checks in one place for every device.
struct OnCpu {
  static constexpr const char* name = "cpu";
};
struct OnCudaSim {
  static constexpr const char* name = "cudasim";
};
template <typename Device>
constexpr bool on_cpu = std::is_same<Device, OnCpu>::value;

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

// A workspace from the device's allocator (minifw.devices.workspace): a byte
// buffer of at least `needed` bytes, possibly more (the allocator keeps its
// largest buffer), aligned for T. Null when nothing is needed.
template <typename T>
inline T* workspace_ptr(py::array& ws, int64_t needed) {
  if (needed == 0) return nullptr;
  if (!ws.dtype().is(py::dtype::of<uint8_t>()) || !(ws.flags() & py::array::c_style) || !ws.writeable())
    throw py::value_error("workspace: expected a writable, C-contiguous uint8 array");
  if (static_cast<int64_t>(ws.size()) < needed)
    throw py::value_error("workspace: expected at least " + std::to_string(needed) + " bytes, got " +
                          std::to_string(ws.size()));
  if (reinterpret_cast<uintptr_t>(ws.data()) % alignof(T))
    throw py::value_error("workspace: misaligned buffer");
  return static_cast<T*>(ws.mutable_data());
}

inline void require(bool ok, const std::string& what) {
  if (!ok) throw py::value_error(what);
}

// The most elements any buffer a kernel indexes may have: far enough below
// 2^63 that sums of a few sizes and offsets derived from them cannot wrap.
constexpr int64_t kMaxElements = int64_t{1} << 58;

// The product of sizes passed as ints (outer * C * inner, N * C * H * W, ...),
// computed before it is compared with any array's size, so that a wrapped
// product (e.g. (2**62 + 2) * 4 == 8) cannot pass the check. A negative size,
// or a product (of the sizes, zeros counted as ones, so that every partial
// product a kernel forms is bounded too) past kMaxElements, raises ValueError.
inline int64_t checked_product(std::initializer_list<int64_t> sizes, const char* what) {
  int64_t product = 1, bound = 1;
  for (int64_t s : sizes) {
    if (s < 0) throw py::value_error(std::string(what) + ": sizes must be >= 0, got " + std::to_string(s));
    if (__builtin_mul_overflow(bound, std::max<int64_t>(s, 1), &bound) || bound > kMaxElements)
      throw py::value_error(std::string(what) + ": sizes too large (more than 2^58 elements)");
    product *= s;
  }
  return product;
}

// An array the binding hands to a kernel, with the name its errors use.
struct Operand {
  const py::array* array;
  const char* name;
};

// Outputs may share no memory with one another or with any input: kernels
// read inputs after writing outputs, in blocks and over threads. Call after
// in_ptr / out_ptr, which make each footprint one contiguous byte range.
inline void require_disjoint(std::initializer_list<Operand> outputs, std::initializer_list<Operand> inputs) {
  auto overlap = [](const py::array& a, const py::array& b) {
    if (a.nbytes() == 0 || b.nbytes() == 0) return false;
    const char* pa = static_cast<const char*>(a.data());
    const char* pb = static_cast<const char*>(b.data());
    return pa < pb + b.nbytes() && pb < pa + a.nbytes();
  };
  auto refuse = [](const Operand& o, const Operand& other) {
    throw py::value_error(std::string(o.name) + ": must not share memory with " + other.name);
  };
  for (auto o = outputs.begin(); o != outputs.end(); ++o) {
    for (auto p = o + 1; p != outputs.end(); ++p)
      if (overlap(*o->array, *p->array)) refuse(*o, *p);
    for (const Operand& in : inputs)
      if (overlap(*o->array, *in.array)) refuse(*o, in);
  }
}
}  // namespace minifw
