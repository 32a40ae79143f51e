// Binding for the plain GEMM primitive.
#include <algorithm>
#include <string>

#include "bind_util.h"
#include "cpu/gemm.h"
#include "cpu/parallel.h"
#include "cuda/gemm.h"
#include "registry.h"

namespace minifw {
namespace {

// A row-major view of a 2-D array with unit column stride and row stride ld,
// or of its transpose when the array is column-major (e.g. x.T). The layout is
// read from the array's own shape and strides, so every element the GEMM
// touches lies inside the array.
template <typename T>
struct MatrixView {
  const T* data;
  int64_t ld;
  bool transposed;  // data holds the transpose of the array
};

template <typename T, typename A>
MatrixView<T> matrix_view(const A& a, const char* name) {
  if (!a.dtype().equal(py::dtype::of<T>()))  // equal: the same type and byte order, any instance
    throw py::type_error(std::string("gemm: ") + name + ": expected dtype " +
                         std::string(py::str(py::dtype::of<T>())) + ", got " + std::string(py::str(a.dtype())));
  if (a.ndim() != 2) throw py::value_error(std::string(name) + ": expected a 2-D array");
  const int64_t item = sizeof(T);
  const int64_t rows = a.shape(0), cols = a.shape(1);
  const int64_t s0 = a.strides(0), s1 = a.strides(1);
  const T* p = static_cast<const T*>(a.data());
  if ((cols == 1 || s1 == item) && (rows == 1 || (s0 % item == 0 && s0 >= cols * item)))
    return {p, rows == 1 ? cols : s0 / item, false};
  if ((rows == 1 || s0 == item) && (cols == 1 || (s1 % item == 0 && s1 >= rows * item)))
    return {p, cols == 1 ? rows : s1 / item, true};
  throw py::value_error(std::string(name) + ": needs unit stride along one axis");
}

// The checked operands of C = alpha * op(A) * op(B) + beta * C: shapes agree, C is
// writable and holds M x N values; A and B are read through matrix views.
template <typename T>
struct GemmCall {
  int64_t M, N, K;
  bool trans_a, trans_b;  // after the views' own transposes
  MatrixView<T> a, b;
  T* c;
};

template <typename T, typename A>
GemmCall<T> check_gemm_call(const char* fn, A& a, A& b, A& c, bool trans_a, bool trans_b) {
  const std::string name = fn;
  if (a.ndim() != 2 || b.ndim() != 2 || c.ndim() != 2) throw py::value_error(name + ": a, b and c must be 2-D");
  const int64_t M = trans_a ? a.shape(1) : a.shape(0);
  const int64_t K = trans_a ? a.shape(0) : a.shape(1);
  const int64_t Kb = trans_b ? b.shape(1) : b.shape(0);
  const int64_t N = trans_b ? b.shape(0) : b.shape(1);
  if (K != Kb) throw py::value_error(name + ": inner dimensions differ");
  if (c.shape(0) != M || c.shape(1) != N) throw py::value_error(name + ": c has the wrong shape");
  T* cp = out_ptr<T>(c, M * N, "c");
  MatrixView<T> av = matrix_view<T>(a, "a"), bv = matrix_view<T>(b, "b");
  return {M, N, K, trans_a != av.transposed, trans_b != bv.transposed, av, bv, cp};
}

template <typename T, typename Device>
void gemm_entry(Array<Device> a, Array<Device> b, Array<Device> c, bool trans_a, bool trans_b, double alpha,
                double beta) {
  const GemmCall<T> g = check_gemm_call<T>("gemm", a, b, c, trans_a, trans_b);
  require_disjoint({{&c, "c"}}, {{&a, "a"}, {&b, "b"}});
  void* const stream = Device::stream();
  py::gil_scoped_release release;
  if constexpr (on_cpu<Device>)
    gemm<T>(g.trans_a, g.trans_b, g.M, g.N, g.K, static_cast<T>(alpha), g.a.data, g.a.ld, g.b.data, g.b.ld,
            static_cast<T>(beta), g.c, g.N, get_num_threads());
  else
    MINIFW_ON_GPU(Device, gemm<T>(g.trans_a, g.trans_b, g.M, g.N, g.K, static_cast<T>(alpha), g.a.data, g.a.ld,
                                  g.b.data, g.b.ld, static_cast<T>(beta), g.c, g.N, stream));
}

// The pre-packed-B path, for its tests: op(B) packed once, then `repeats`
// products C = alpha * op(A) * op(B) + beta * C into the same C, each reading
// the one packed copy.
template <typename Device>
void bind_on(py::module_& m) {
  def_kernel(m, {"gemm", "", Device::name}, &gemm_entry<float, Device>, &gemm_entry<double, Device>, py::arg("a"),
             py::arg("b"), py::arg("c"), py::arg("trans_a"), py::arg("trans_b"), py::arg("alpha"), py::arg("beta"));
}

template <typename T>
void gemm_prepacked_b_entry(py::array a, py::array b, py::array c, bool trans_a, bool trans_b, double alpha,
                            double beta, int64_t repeats) {
  const GemmCall<T> g = check_gemm_call<T>("gemm_prepacked_b", a, b, c, trans_a, trans_b);
  require_disjoint({{&c, "c"}}, {{&a, "a"}, {&b, "b"}});
  py::gil_scoped_release release;
  PackedB<T> packed;
  pack_b<T>(packed, g.trans_b, g.M, g.N, g.K, g.b.data, g.b.ld);
  for (int64_t r = 0; r < repeats; ++r)
    gemm<T>(g.trans_a, g.M, g.N, g.K, static_cast<T>(alpha), g.a.data, g.a.ld, packed, static_cast<T>(beta),
            g.c, g.N, get_num_threads());
}
}  // namespace

MINIFW_BINDINGS(bind_gemm) {
  m.def("gemm_prepacked_b_f32", &gemm_prepacked_b_entry<float>);
  m.def("gemm_prepacked_b_f64", &gemm_prepacked_b_entry<double>);
  MINIFW_BIND_ON_EVERY_DEVICE(bind_on, m);
  // The micro-kernel a product with m rows of C runs (m = 0: the ISA's largest).
  m.def(
      "gemm_kernel_name",
      [](const std::string& dtype, int64_t m) {
        return std::string(dtype == "float64" ? gemm_kernel<double>(active_isa(), m).name
                                              : gemm_kernel<float>(active_isa(), m).name);
      },
      py::arg("dtype"), py::arg("m") = 0);
  // The blocking a product with m rows runs, and the caches it was derived from;
  // with l1d/l2 given (bytes, > 0), what those caches would give instead.
  m.def(
      "gemm_blocking",
      [](const std::string& dtype, int64_t m, int64_t l1d, int64_t l2) {
        py::dict d;
        auto fill = [&](auto k) {
          d["name"] = k.name;
          d["mr"] = k.mr;
          d["nr"] = k.nr;
          d["kc"] = k.kc;
          d["kc_whole"] = std::max(k.kc, k.kc_whole);
          d["mc"] = k.mc;
          d["nc"] = k.nc;
          d["a_outer"] = k.a_outer;
        };
        if (dtype == "float64") {
          GemmKernel<double> k = gemm_kernel<double>(active_isa(), m);
          if (l1d > 0 && l2 > 0) k = gemm_kernel_for_caches<double>(active_isa(), m, {l1d, l2});
          fill(k);
        } else {
          GemmKernel<float> k = gemm_kernel<float>(active_isa(), m);
          if (l1d > 0 && l2 > 0) k = gemm_kernel_for_caches<float>(active_isa(), m, {l1d, l2});
          fill(k);
        }
        d["l1d_bytes"] = l1d > 0 ? l1d : cpu_caches().l1d;
        d["l2_bytes"] = l2 > 0 ? l2 : cpu_caches().l2;
        return d;
      },
      py::arg("dtype"), py::arg("m") = 0, py::arg("l1d") = 0, py::arg("l2") = 0);
}
}  // namespace minifw
