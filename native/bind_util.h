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
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda/memory.h"

namespace minifw {
namespace py = pybind11;

// Where a binding sends the pointers it has checked: the CPU kernels (cpu/), the
// CUDA launchers compiled for the emulator (device "cudasim": host memory
// standing for a GPU's), or the same launchers compiled by nvcc (device "cuda").
// One binding function per entry point, templated on the device, keeps the
// checks in one place for every device; the two CUDA devices share every line
// but the launcher's namespace, so the emulator tests the binding code a GPU runs.
//
// Array<Device> is what an entry point takes: a NumPy array on the CPU, a
// DeviceArray on the CUDA devices, read through the array's
// `interface` attribute (the CUDA array interface; "cudasim" arrays carry the
// same dictionary under their own name, so that no CUDA library mistakes their
// host memory for a GPU's). stream() is the stream kernels are launched on:
// CuPy's current stream on "cuda".
struct OnCpu {
  static constexpr const char* name = "cpu";
  static void* stream() { return nullptr; }
};
struct OnCudaSim {
  static constexpr const char* name = "cudasim";
  static constexpr const char* interface = "__cudasim_array_interface__";
  static void* stream() { return nullptr; }
};
#ifdef MINIFW_WITH_CUDA
struct OnCuda {
  static constexpr const char* name = "cuda";
  static constexpr const char* interface = "__cuda_array_interface__";
  static void* stream() {  // cupy.cuda.get_current_stream().ptr, with the GIL held
    static PyObject* get_current_stream =  // kept for the life of the process
        py::object(py::module_::import("cupy.cuda").attr("get_current_stream")).release().ptr();
    return reinterpret_cast<void*>(
        py::reinterpret_borrow<py::object>(get_current_stream)().attr("ptr").cast<uintptr_t>());
  }
};
#endif
template <typename Device>
constexpr bool on_cpu = std::is_same<Device, OnCpu>::value;
template <typename Device>
constexpr bool on_cudasim = std::is_same<Device, OnCudaSim>::value;

// Binds an entry point family on every device this build has: bind<OnCpu>(m), ...
#ifdef MINIFW_WITH_CUDA
#define MINIFW_BIND_ON_EVERY_DEVICE(bind, m) (bind<OnCpu>(m), bind<OnCudaSim>(m), bind<OnCuda>(m))
#else
#define MINIFW_BIND_ON_EVERY_DEVICE(bind, m) (bind<OnCpu>(m), bind<OnCudaSim>(m))
#endif

// The launcher call `f(args)` of a CUDA device, in its namespace:
// MINIFW_ON_GPU(Device, pool_forward<T>(s, mode, x, y, indices, stream)).
#ifdef MINIFW_WITH_CUDA
#define MINIFW_ON_GPU(Device, ...) \
  (::minifw::on_cudasim<Device> ? ::minifw::cudasim::__VA_ARGS__ : ::minifw::cuda::__VA_ARGS__)
#else
#define MINIFW_ON_GPU(Device, ...) (::minifw::cudasim::__VA_ARGS__)
#endif

// An array in a CUDA device's memory, described by the CUDA array interface
// (version 2 or later): data pointer, shape, byte strides (none when
// C-contiguous), type string and read-only flag. `owner` keeps the array alive
// for the call. The accessors mirror py::array's, so checks and entry points
// read both alike.
template <typename Device>
struct DeviceArray {
  py::object owner;
  uintptr_t address = 0;
  std::vector<int64_t> dims{0}, byte_strides;  // as constructed: no elements; byte_strides empty: C-contiguous
  py::dtype type = py::dtype::of<uint8_t>();
  bool readonly = false;

  py::ssize_t ndim() const { return static_cast<py::ssize_t>(dims.size()); }
  int64_t shape(py::ssize_t d) const { return dims[static_cast<size_t>(d)]; }
  int64_t strides(py::ssize_t d) const {
    if (!byte_strides.empty()) return byte_strides[static_cast<size_t>(d)];
    int64_t s = type.itemsize();
    for (size_t i = static_cast<size_t>(d) + 1; i < dims.size(); ++i) s *= dims[i];
    return s;
  }
  int64_t size() const {
    int64_t n = 1;
    for (int64_t v : dims) n *= v;
    return n;
  }
  int64_t nbytes() const { return size() * type.itemsize(); }
  const py::dtype& dtype() const { return type; }
  bool c_contiguous() const {
    if (byte_strides.empty() || size() == 0) return true;
    int64_t expected = type.itemsize();
    for (py::ssize_t d = ndim() - 1; d >= 0; --d) {
      if (shape(d) != 1 && byte_strides[static_cast<size_t>(d)] != expected) return false;
      expected *= shape(d);
    }
    return true;
  }
  bool writeable() const { return !readonly; }
  const void* data() const { return reinterpret_cast<const void*>(address); }
  void* mutable_data() const { return reinterpret_cast<void*>(address); }
};

// Reads `obj.<Device::interface>`; TypeError unless it is one, with sizes that
// cannot overflow when multiplied (the kernels' own bounds are checked later).
template <typename Device>
DeviceArray<Device> device_array(py::handle obj) {
  const std::string where = std::string(Device::name) + " array";
  if (!py::hasattr(obj, Device::interface))
    throw py::type_error("expected an array on device '" + std::string(Device::name) + "' (an object with " +
                         Device::interface + "), got " + std::string(py::str(py::type::of(obj).attr("__name__"))));
  py::dict cai = obj.attr(Device::interface);
  DeviceArray<Device> a;
  a.dims.clear();
  a.owner = py::reinterpret_borrow<py::object>(obj);
  py::tuple data = cai["data"];
  a.address = data[0].cast<uintptr_t>();
  a.readonly = data[1].cast<bool>();
  a.type = py::dtype(cai["typestr"].cast<std::string>());
  int64_t elems = 1;
  for (py::handle d : cai["shape"].cast<py::tuple>()) {
    const int64_t v = d.cast<int64_t>();
    // each size bounded too, so strides derived from sizes after a zero cannot overflow
    if (v < 0 || v > (int64_t{1} << 58) || (v > 0 && elems > (int64_t{1} << 58) / v))
      throw py::value_error(where + ": bad shape");
    elems *= v;
    a.dims.push_back(v);
  }
  if (cai.contains("strides") && !cai["strides"].is_none())
    for (py::handle s : cai["strides"].cast<py::tuple>()) a.byte_strides.push_back(s.cast<int64_t>());
  if (!a.byte_strides.empty() && a.byte_strides.size() != a.dims.size())
    throw py::value_error(where + ": strides and shape differ in length");
  if (a.address == 0 && elems > 0) throw py::value_error(where + ": null data pointer");
  return a;
}

}  // namespace minifw

// Lets an entry point take DeviceArray<Device> arguments: any object with the
// device's array interface (others do not match, and pybind11 says which
// argument types the function takes).
namespace pybind11 {
namespace detail {
template <typename Device>
struct type_caster<minifw::DeviceArray<Device>> {
  PYBIND11_TYPE_CASTER(minifw::DeviceArray<Device>, const_name("DeviceArray"));
  bool load(handle src, bool) {
    if (!hasattr(src, Device::interface)) return false;
    value = minifw::device_array<Device>(src);
    return true;
  }
  static handle cast(const minifw::DeviceArray<Device>& a, return_value_policy, handle) {
    return a.owner.inc_ref();
  }
};
}  // namespace detail
}  // namespace pybind11

namespace minifw {
template <typename Device>
struct ArrayOf {
  using type = DeviceArray<Device>;
};
template <>
struct ArrayOf<OnCpu> {
  using type = py::array;
};
template <typename Device>
using Array = typename ArrayOf<Device>::type;

// An optional array argument (None or an array) of Device.
template <typename Device>
Array<Device> array_of(py::handle obj) {
  if constexpr (on_cpu<Device>)
    return py::reinterpret_borrow<py::object>(obj).cast<py::array>();
  else
    return device_array<Device>(obj);
}

// Memory of a CUDA device for one call's small results (a kernel's status
// words, a loss sum), freed at scope exit; read back with read_device.
template <typename Device>
class DeviceScratch {
 public:
  DeviceScratch(size_t bytes, void* stream)
      : ptr_(MINIFW_ON_GPU(Device, device_alloc(bytes, stream))), stream_(stream) {}
  ~DeviceScratch() { MINIFW_ON_GPU(Device, device_free(ptr_, stream_)); }
  DeviceScratch(const DeviceScratch&) = delete;
  DeviceScratch& operator=(const DeviceScratch&) = delete;
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }

 private:
  void* ptr_;
  void* stream_;
};

// Copies `bytes` of a CUDA device's memory to the host once the work queued on
// `stream` before it has run.
template <typename Device>
void read_device(void* host, const void* device, size_t bytes, void* stream) {
  MINIFW_ON_GPU(Device, copy_to_host(host, device, bytes, stream));
}

inline bool is_c_contiguous(const py::array& a) { return a.flags() & py::array::c_style; }
template <typename Device>
bool is_c_contiguous(const DeviceArray<Device>& a) {
  return a.c_contiguous();
}

template <typename T, typename A>
void check_array(const A& a, int64_t expected_elems, const char* name, bool writable) {
  if (!a.dtype().equal(py::dtype::of<T>()))  // equal: the same type and byte order, any instance
    throw py::type_error(std::string(name) + ": expected dtype " +
                         std::string(py::str(py::dtype::of<T>())) + ", got " +
                         std::string(py::str(a.dtype())));
  if (!is_c_contiguous(a)) throw py::value_error(std::string(name) + ": expected a C-contiguous array");
  if (!std::is_same<A, py::array>::value && reinterpret_cast<uintptr_t>(a.data()) % alignof(T))
    throw py::value_error(std::string(name) + ": misaligned data pointer (a GPU faults on it)");
  if (writable && !a.writeable())
    throw py::value_error(std::string(name) + ": expected a writable array");
  if (static_cast<int64_t>(a.size()) != expected_elems)
    throw py::value_error(std::string(name) + ": expected " + std::to_string(expected_elems) +
                          " elements, got " + std::to_string(a.size()));
}

template <typename T, typename A>
const T* in_ptr(const A& a, int64_t expected_elems, const char* name) {
  check_array<T>(a, expected_elems, name, false);
  return static_cast<const T*>(a.data());
}

template <typename T, typename A>
T* out_ptr(A& a, int64_t expected_elems, const char* name) {
  check_array<T>(a, expected_elems, name, true);
  return static_cast<T*>(a.mutable_data());
}

// A workspace from the device's allocator (minifw.devices.workspace): a byte
// buffer of at least `needed` bytes, possibly more (the allocator keeps its
// largest buffer), aligned for T. Null when nothing is needed.
template <typename T, typename A>
T* workspace_ptr(A& ws, int64_t needed) {
  if (needed == 0) return nullptr;
  if (!ws.dtype().equal(py::dtype::of<uint8_t>()) || !is_c_contiguous(ws) || !ws.writeable())
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

// An array the binding hands to a kernel, with the name its errors use: its
// footprint, one contiguous byte range once in_ptr / out_ptr have checked it.
struct Operand {
  const char* begin;
  int64_t nbytes;
  const char* name;
  template <typename A>
  Operand(const A* a, const char* n)
      : begin(static_cast<const char*>(a->data())), nbytes(static_cast<int64_t>(a->nbytes())), name(n) {}
};

// Outputs may share no memory with one another or with any input: kernels
// read inputs after writing outputs, in blocks and over threads. Call after
// in_ptr / out_ptr, which make each footprint one contiguous byte range.
inline void require_disjoint(std::initializer_list<Operand> outputs, std::initializer_list<Operand> inputs) {
  auto overlap = [](const Operand& a, const Operand& b) {
    if (a.nbytes == 0 || b.nbytes == 0) return false;
    return a.begin < b.begin + b.nbytes && b.begin < a.begin + a.nbytes;
  };
  auto refuse = [](const Operand& o, const Operand& other) {
    throw py::value_error(std::string(o.name) + ": must not share memory with " + other.name);
  };
  for (auto o = outputs.begin(); o != outputs.end(); ++o) {
    for (auto p = o + 1; p != outputs.end(); ++p)
      if (overlap(*o, *p)) refuse(*o, *p);
    for (const Operand& in : inputs)
      if (overlap(*o, in)) refuse(*o, in);
  }
}
}  // namespace minifw
